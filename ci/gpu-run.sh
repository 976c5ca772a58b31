#!/usr/bin/env bash
# ci/gpu-run.sh [--bundle B.tar.gz [--prefix DIR] [--source DIR] | --binary PATH]
#               [--out DIR] [--name NAME]
#
# One command on a machine with an NVIDIA GPU: builds the cuda preset's
# scaleproof (from a bundle with ci/offline-setup.sh, where no package archive
# is reachable; else with ci/build.sh from this checkout; --binary PATH skips
# the build and runs a scaleproof of the cuda preset built elsewhere against
# the same CUDA major version, its libraries found through LD_LIBRARY_PATH),
# then on the GPU:
#   check      conformance of every technique (scaleproof check; its table in logs/check.log)
#   main       the main job (scaleproof run), at --size small to fit the budget
#   vendor     STREAM, GEMM against cuBLAS and conv against cuDNN at the large
#              sizes (scaleproof run -F roofline -F gemm -F conv --size large)
#   nccl       nccl-tests all_reduce over NCCL, one rank per visible GPU
# and writes one results folder OUT/NAME (default results/gpu-<gpu>-<UTC date>)
# holding each run's folder (each with its manifest.json: GPU, driver, CUDA,
# cuBLAS, cuDNN, NCCL versions), manifest.json (the main job's), system.txt
# (nvidia-smi, nvcc), the logs, and summary.md, the table printed last.
# Each step has a time limit (SP_GPU_STEP_LIMITS, seconds: check main vendor
# nccl; default 60 270 150 40, 520 s in all, sized from the step durations
# in results/gpu-h200-20261126), so that with --binary the run stays within
# 10 minutes;
# a step that fails or runs out of time is reported in the table, and the
# exit code is 1.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "gpu-run: error: $*" >&2; exit 2; }
bundle="" prefix="" src="" binary="" out=$root/results name=""
while (($#)); do
  case "$1" in
    --bundle) bundle=${2:-}; shift 2 ;;
    --prefix) prefix=${2:-}; shift 2 ;;
    --source) src=${2:-}; shift 2 ;;
    --binary) binary=${2:-}; shift 2 ;;
    --out) out=${2:-}; shift 2 ;;
    --name) name=${2:-}; shift 2 ;;
    -h|--help) sed -n 2,24p "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || die "no NVIDIA GPU answers nvidia-smi on this machine"
[[ -z "$bundle" || -f "$bundle" ]] || die "bundle '$bundle' not found"
[[ -z "$bundle" || -z "$binary" ]] || die "--bundle builds, --binary runs a build: give one of them"
if [[ -n "$binary" ]]; then
  [[ -x "$binary" ]] || die "--binary '$binary' is not an executable file"
  binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
  missing=$(ldd "$binary" 2>/dev/null | awk '/not found/{print $1}' | tr '\n' ' ')
  [[ -z "$missing" ]] || die "--binary '$binary' misses libraries (add their folders to LD_LIBRARY_PATH): $missing"
fi
read -r t_check t_main t_vendor t_nccl <<<"${SP_GPU_STEP_LIMITS:-60 270 150 40}"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
ngpu=$(nvidia-smi -L | grep -c '^GPU')
name=${name:-gpu-$(echo "$gpu" | tr 'A-Z' 'a-z' | grep -oE 'h100|h200|a100|b200|l40s?|[a-z][0-9]{2,4}' | head -n1)-$(date -u +%Y%m%d)}
mkdir -p "$out" || die "cannot create '$out'"
res=$out/$name
[[ ! -e "$res" ]] || die "results folder '$res' exists already"
tmp=$out/.$name.tmp-$$
mkdir -p "$tmp/logs"
start=$(date +%s)

# ---- build ------------------------------------------------------------------
if [[ -n "$binary" ]]; then
  echo "gpu-run: no build: running $binary" | tee "$tmp/logs/setup.log"
  B=$binary
elif [[ -n "$bundle" ]]; then
  prefix=${prefix:-${XDG_CACHE_HOME:-$HOME/.cache}/scaleproof-offline}
  sargs=()
  [[ -n "$src" ]] && sargs=(--source "$src")
  "$root/ci/offline-setup.sh" --bundle "$bundle" --prefix "$prefix" --cuda --no-tests "${sargs[@]}" 2>&1 |
    tee "$tmp/logs/setup.log"
  [[ ${PIPESTATUS[0]} == 0 ]] || { echo "gpu-run: the build failed (log: $tmp/logs/setup.log)" >&2; exit 1; }
  # shellcheck source=/dev/null
  . "$prefix/env.sh"
  B=$prefix/build/cuda/harness/scaleproof
else
  "$root/ci/build.sh" cuda scaleproof 2>&1 | tee "$tmp/logs/setup.log"
  [[ ${PIPESTATUS[0]} == 0 ]] || { echo "gpu-run: the build failed" >&2; exit 1; }
  B=$root/build/cuda/harness/scaleproof
fi
build_s=$(( $(date +%s) - start ))
{ nvidia-smi; echo; nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv
  echo; command -v nvcc >/dev/null && nvcc --version; echo; uname -a; cat /etc/os-release 2>/dev/null; nproc
} >"$tmp/system.txt" 2>&1

# ---- the steps on the GPU -------------------------------------------------------
declare -A status secs
step() {  # step NAME LIMIT COMMAND...
  local n=$1 lim=$2 t0 rc; shift 2
  t0=$(date +%s)
  echo "gpu-run: $n: $* (limit ${lim} s)"
  timeout --kill-after=10 "$lim" "$@" >"$tmp/logs/$n.log" 2>&1
  rc=$?
  secs[$n]=$(( $(date +%s) - t0 ))
  case $rc in 0) status[$n]=ok ;; 124|137) status[$n]="timed out" ;; *) status[$n]="exit $rc" ;; esac
  echo "gpu-run: $n: ${status[$n]} after ${secs[$n]} s"
}
step check "$t_check" "$B" check   # the table and its "N passed, M failed" line: logs/check.log
step main "$t_main" "$B" run --size small --out "$tmp" --name main
step vendor "$t_vendor" "$B" run -F roofline -F gemm -F conv --size large --out "$tmp" --name vendor
step nccl "$t_nccl" mpiexec -n "$ngpu" "$B" nccl-tests all_reduce -b 1M -e 1G -f 4 -a nccl,ring_nccl -n 10 -w 3 \
  --json "$tmp/nccl-all_reduce.json"

[[ -f $tmp/main/manifest.json ]] && cp "$tmp/main/manifest.json" "$tmp/manifest.json"
{
  echo "build_seconds $build_s"
  for n in check main vendor nccl; do echo "step $n ${secs[$n]:-0} ${status[$n]:-not run}"; done
} >"$tmp/steps.txt"
python3 "$root/ci/gpu-summary.py" "$tmp" >"$tmp/summary.md" 2>"$tmp/logs/summary.log" || echo "summary failed: see logs/summary.log" >"$tmp/summary.md"
mv "$tmp" "$res"
echo "gpu-run: results in $res ($(( $(date +%s) - start )) s in all)"
echo
cat "$res/summary.md"
for n in check main vendor nccl; do [[ "${status[$n]:-}" == ok ]] || exit 1; done
