#!/usr/bin/python3
"""Trend of one case over runs, from `scaleproof history --case`.

Reads DIR/history.json ({case, machine, reference, threshold, points: [{run,
date, commit, median, min, max, calls?: {median, min, p90}}]}) and writes
DIR/history.png: per run its median time per call over repetitions (dot, the
figure the regression gate judges) and their spread (min..max bar); where the
run has the measurement service's per-call statistics, also its median call
and the spread of its calls (fastest call .. highest 90th percentile, square
and bar beside the dot). The runs in date order with their commit on the axis,
and the regression limit (the reference times 1 + threshold) when a reference
was formed (of the median calls when every judged run has them, else of the
medians over repetitions: "reference_of").
Usage: history_plot.py DIR
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(folder):
    with open(os.path.join(folder, "history.json")) as f:
        h = json.load(f)
    pts = h["points"]
    x = list(range(len(pts)))
    med = [p["median"] for p in pts]
    lo = [p["median"] - p["min"] for p in pts]
    hi = [p["max"] - p["median"] for p in pts]
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(pts) + 3), 4))
    ax.errorbar(x, med, yerr=[lo, hi], fmt="o-", capsize=3,
                label="time per call, median over repetitions (bar: min..max over repetitions)")
    calls = [(i, p["calls"]) for i, p in enumerate(pts) if p.get("calls")]
    if calls:
        cx = [i + 0.15 for i, _ in calls]
        cm = [c["median"] for _, c in calls]
        ax.errorbar(cx, cm, yerr=[[c["median"] - c["min"] for _, c in calls], [c["p90"] - c["median"] for _, c in calls]],
                    fmt="s", color="tab:green", capsize=3, markersize=4,
                    label="median call (bar: fastest call .. highest 90th percentile)")
    if h.get("reference"):
        of = "median calls" if h.get("reference_of") == "calls" else "medians over repetitions"
        ax.axhline(h["reference"], color="gray", linestyle="--", label="reference: the previous runs' " + of)
        ax.axhline(h["reference"] * (1 + h["threshold"]), color="red", linestyle=":",
                   label="regression above reference x %.3g" % (1 + h["threshold"]))
    ax.set_xticks(x)
    ax.set_xticklabels(["#%d %s\n%s" % (p["run"], p["commit"][:8], p["date"][:10]) for p in pts], rotation=45,
                       ha="right", fontsize=7)
    ax.set_ylabel("time per call (s)")
    ax.set_title("%s on %s" % (h["case"], h["machine"] or "all machines"), fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "history.png"), dpi=100)


if __name__ == "__main__":
    main(sys.argv[1])
