#!/usr/bin/python3
"""Roofline chart of a `scaleproof run` results folder (Williams et al. 2009;
docs/roofline.md, "Roofline").

Reads machine.json (the roofs measured in the run) and bench.json (Google
Benchmark JSON: per case the FLOP count per call, arithmetic intensity and
median time) and writes roofline.png with each kernel's point. The
performance of a point is flop / median time, as harness/src/models.cpp
computes it. Usage: roofline_plot.py RESULTS_DIR
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def kernel_points(bench):
    """(name, AI, FLOP/s) per case, from the median aggregate (or the single run)."""
    chosen = {}
    for b in bench["benchmarks"]:
        if b.get("error_occurred"):
            continue
        name = b.get("run_name", b["name"])
        median = b.get("aggregate_name") == "median"
        if b.get("run_type", "iteration") == "iteration" and name in chosen:
            continue
        if b.get("run_type") == "aggregate" and not median:
            continue
        chosen[name] = b
    out = []
    for name, b in sorted(chosen.items()):
        t = b["real_time"] * UNIT[b.get("time_unit", "ns")]
        label = name[:-len("/manual_time")] if name.endswith("/manual_time") else name
        label = label.split("/", 1)[-1]  # family/technique/variant/params -> technique/variant/params
        if b.get("flop", 0) > 0 and b.get("AI", 0) > 0 and t > 0:
            out.append((label, b["AI"], b["flop"] / t))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: roofline_plot.py RESULTS_DIR")
    folder = sys.argv[1]
    with open(os.path.join(folder, "machine.json")) as fh:
        machine = json.load(fh)
    with open(os.path.join(folder, "bench.json")) as fh:
        bench = json.load(fh)
    bw = machine.get("bandwidth_Bps", 0)
    peaks = machine.get("peak_flops", {})
    pts = kernel_points(bench)
    if bw <= 0 or not pts:
        sys.exit("no bandwidth roof or no kernel with FLOPs in this folder")
    ais = [p[1] for p in pts]
    lo, hi = min(ais + [0.01]) / 4, max(ais + [100.0]) * 4
    grid = [lo * (hi / lo) ** (i / 200.0) for i in range(201)]
    top = max(list(peaks.values()) + [p[2] for p in pts])
    fig, ax = plt.subplots(figsize=(12, 6))
    ax.loglog([a for a in grid if a * bw <= top], [a * bw for a in grid if a * bw <= top], "k-", lw=1,
              label="bandwidth %.3g GB/s" % (bw / 1e9))
    for i, (dtype, peak) in enumerate(sorted(peaks.items())):
        ax.loglog(grid, [min(peak, a * bw) for a in grid], "-", color="C%d" % i, lw=2,
                  label="%s peak %.3g GFLOP/s" % (dtype, peak / 1e9))
    markers = "os^vD<>ph*"
    for j, (name, ai, perf) in enumerate(pts):
        ax.loglog([ai], [perf], markers[j % len(markers)], color="C%d" % ((j + 3) % 10), label=name, ms=7)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("performance (FLOP/s)")
    ax.set_title("Roofline (roofs measured in this run)")
    ax.grid(alpha=0.3, which="both")
    ax.set_ylim(top=top * 3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "roofline.png"), dpi=90)
    plt.close(fig)


if __name__ == "__main__":
    main()
