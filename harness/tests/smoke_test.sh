#!/usr/bin/env bash
# smoke_test.sh SCALEPROOF [mpi2] (bench|run) ARGS...: a short run at the
# small size into a temporary folder, then checks the results folder: the
# files each command promises, valid JSON, and the manifest's keys.
set -euo pipefail
bin=$1; shift
launch=()
if [[ $1 == mpi2 ]]; then launch=("${MPIEXEC:-mpiexec}" -n 2); shift; fi
cmd=$1; shift
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"${launch[@]}" "$bin" "$cmd" --size small --min-time 0.01 -r 2 --out "$work" --name smoke "$@" >"$work/log" 2>&1 || {
  rc=$?; cat "$work/log"
  # A bench where nothing can run at this rank count is fine only if the
  # selection said so; any other failure fails the test.
  grep -q 'nothing selected' "$work/log" && [[ ${#launch[@]} -gt 0 ]] && { echo "no multi-rank techniques yet"; exit 0; }
  exit $rc
}
dir=$work/smoke
files=(manifest.json bench.json report.md)
[[ $cmd == run ]] && files+=(check.json verdicts.json machine.json)
for f in "${files[@]}"; do
  [[ -s $dir/$f ]] || { echo "missing $f"; ls -la "$dir"; exit 1; }
done
/usr/bin/python3 - "$dir" "$cmd" <<'PY'
import json, sys, pathlib
d = pathlib.Path(sys.argv[1])
for f in d.glob("*.json"):
    json.load(open(f))  # every JSON file parses
m = json.load(open(d / "manifest.json"))
need = ["git_commit", "compiler", "kokkos_version", "kokkos_backends", "mpi", "nccl", "cpu_model", "gpu",
        "ranks", "threads_per_rank", "date", "command_line", "vendors"]
missing = [k for k in need if k not in m]
assert not missing, f"manifest lacks {missing}"
# Every vendor baseline runs on the Kokkos kernels' threads.
for name, v in m["vendors"].items():
    assert int(v["threads"]) == m["threads_per_rank"], f"{name}: {v['threads']} threads, run has {m['threads_per_rank']}"
b = json.load(open(d / "bench.json"))
runs = [x for x in b["benchmarks"] if x.get("run_type") == "iteration"]
assert runs, "no benchmark ran"
errors = [x["name"] for x in b["benchmarks"] if x.get("error_occurred")]
assert not errors, f"benchmarks failed: {errors}"
kinds = {"kernel", "vendor", "algorithm", "strategy"}
for x in runs:
    assert x["real_time"] > 0 and "bytes" in x and "FLOPS" in x, x["name"]
    # Each entry names what its variant is, and a vendor variant its library.
    assert x.get("variant_kind") in kinds, (x["name"], x.get("variant_kind"))
    assert (x["variant_kind"] == "vendor") == bool(x.get("library")), (x["name"], x.get("library"))
if sys.argv[2] == "run":
    c = json.load(open(d / "check.json"))
    assert c and all(r["passed"] for r in c), [r for r in c if not r["passed"]]
    v = json.load(open(d / "verdicts.json"))
    assert v, "no verdicts"
    mach = json.load(open(d / "machine.json"))
    assert mach["bandwidth_Bps"] > 0 and mach["peak_flops"], mach
print(f"ok: {len(runs)} benchmark runs")
PY
