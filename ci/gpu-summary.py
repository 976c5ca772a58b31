#!/usr/bin/env python3
"""The short table ci/gpu-run.sh prints last, from its results folder:
versions (manifest), each step's outcome, conformance, verdicts, and the
fastest variant figures of STREAM, GEMM (Kokkos vs cuBLAS), conv (Kokkos vs
cuDNN) and NCCL all_reduce. Every figure is read from the run's own files."""
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def checks(rows):
    if not rows:
        return "no check.json"
    bad = [r for r in rows if not r.get("passed")]
    return f"{len(rows) - len(bad)} passed, {len(bad)} failed" + (
        " (" + ", ".join(sorted({f"{r['technique']}/{r['variant']}" for r in bad})[:6]) + ")" if bad else "")


def verdicts(rows):
    if not rows:
        return "no verdicts.json"
    n = {}
    for r in rows:
        n[r["status"]] = n.get(r["status"], 0) + 1
    return ", ".join(f"{v} {k}" for k, v in sorted(n.items()))


def bench_rows(doc):
    """(technique, variant, label) -> median of FLOPS and bytes/s over repetitions."""
    out = {}
    for b in (doc or {}).get("benchmarks", []):
        if b.get("run_type") != "iteration":
            continue
        parts = b["name"].split("/")
        if len(parts) < 4:
            continue
        out.setdefault((parts[1], parts[2], parts[3]), []).append(b)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    return {k: (med([b.get("FLOPS", 0) for b in v]), med([b.get("bytes_per_second", 0) for b in v]),
                med([b["real_time"] for b in v]), v[0]["time_unit"]) for k, v in out.items()}


def main(res):
    lines = ["| what | result |", "|---|---|"]
    m = load(os.path.join(res, "manifest.json")) or {}
    for k in ("gpu", "gpu_compute_capability", "gpu_driver", "cuda_driver_api", "cuda_runtime", "cublas", "cudnn", "nccl",
              "mpi", "kokkos_version", "kokkos_backends", "git_commit"):
        if k in m:
            lines.append(f"| {k} | {str(m[k])[:70]} |")
    steps = {}
    try:
        for line in open(os.path.join(res, "steps.txt")):
            w = line.split()
            if w[0] == "build_seconds":
                lines.append(f"| build (setup + Kokkos + scaleproof) | {w[1]} s |")
            elif w[0] == "step":
                steps[w[1]] = (w[2], " ".join(w[3:]))
    except OSError:
        pass
    for n, (s, st) in steps.items():
        lines.append(f"| step {n} | {st}, {s} s |")
    tally = "no check log"
    try:
        tally = next((l.strip() for l in reversed(open(os.path.join(res, "logs", "check.log")).readlines())
                      if " passed, " in l and l.strip().endswith("failed")), "no tally line in logs/check.log")
    except OSError:
        pass
    lines.append(f"| check: conformance | {tally} |")
    lines.append(f"| main (run --size small): conformance | {checks(load(os.path.join(res, 'main', 'check.json')))} |")
    lines.append(f"| main: verdicts | {verdicts(load(os.path.join(res, 'main', 'verdicts.json')))} |")
    lines.append(f"| vendor (run --size large): verdicts | {verdicts(load(os.path.join(res, 'vendor', 'verdicts.json')))} |")
    rows = bench_rows(load(os.path.join(res, "vendor", "bench.json")))
    for (tech, var, label), (flops, bps, t, unit) in sorted(rows.items()):
        if tech.startswith("stream") or tech == "gemm" or var in ("cudnn",) or (tech, "cudnn", label) in rows:
            fig = f"{bps / 1e9:.0f} GB/s" if tech.startswith("stream") else f"{flops / 1e12:.3g} TFLOP/s"
            lines.append(f"| {tech} {var} {label} | {fig} ({t:.4g} {unit}) |")
    nc = load(os.path.join(res, "nccl-all_reduce.json"))
    if nc:
        big = {}
        for r in nc.get("rows", []):
            if r["algorithm"] not in big or r["size_B"] > big[r["algorithm"]]["size_B"]:
                big[r["algorithm"]] = r
        for a, r in sorted(big.items()):
            lines.append(f"| nccl-tests all_reduce {a}, {r['ranks']} rank(s), {r['size_B'] >> 20} MiB | "
                         f"{r['ip_time_us']:.1f} us, algbw {r['algbw_GBps']:.1f} GB/s, #wrong {r['ip_wrong']} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
