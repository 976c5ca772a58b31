#!/usr/bin/python3
"""Scaling plots of a `scaleproof scale` results folder.

Reads fits.json (written by harness/src/scaling_analysis.cpp) and writes
scaling-<i>.png per series: speedup and efficiency vs N with the fitted
Amdahl or Gustafson curve, and the Karp-Flatt serial fraction e(N).
Formulas: docs/SCALING.md, "Scaling laws". Every plotted number is
read from fits.json; the curves are the fitted law evaluated on a grid.
Usage: scaling_plots.py RESULTS_DIR
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def amdahl(f, n):
    return 1.0 / ((1.0 - f) + f / n)


def gustafson(f, n):
    return (1.0 - f) + f * n


def scatter(ax, pts, key):
    """Timed points filled, oversubscribed ones hollow (not meaningful, not fitted)."""
    for timed, style in ((True, dict(color="C0", label="measured (timed)")),
                         (False, dict(facecolors="none", edgecolors="C3", label="oversubscribed (not fitted)"))):
        xs = [p["n"] for p in pts if p["timed"] == timed and p[key] is not None]
        ys = [p[key] for p in pts if p["timed"] == timed and p[key] is not None]
        if xs:
            ax.scatter(xs, ys, zorder=3, **style)


def plot_series(fit, path):
    pts = fit["points"]
    strong = fit["mode"] == "strong"
    axis = fit["axis"]
    law = fit["amdahl"] if strong else fit["gustafson"]
    f = law.get("f")
    ns = [p["n"] for p in pts]
    grid = [1 + i * (max(ns) - 1) / 100.0 for i in range(101)] if max(ns) > 1 else [1.0]
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(14, 4.2))
    name = "Amdahl" if strong else "Gustafson"

    scatter(a1, pts, "speedup")
    a1.plot(grid, grid, "k:", lw=1, label="ideal (S = N)")
    if f is not None:
        curve = [amdahl(f, n) if strong else gustafson(f, n) for n in grid]
        a1.plot(grid, curve, "C1-", label="%s fit, f = %.4f" % (name, f))
        band = fit["band"]
        a1.fill_between(grid, [c * (1 - band) for c in curve], [c * (1 + band) for c in curve], color="C1",
                        alpha=0.15, label="declared band +/-%g" % band)
    a1.set_xlabel(axis)
    a1.set_ylabel("speedup" if strong else "scaled speedup")
    a1.set_title("%s scaling: speedup" % fit["mode"])
    a1.legend(fontsize=8)

    scatter(a2, pts, "efficiency")
    if f is not None:
        a2.plot(grid, [(amdahl(f, n) if strong else gustafson(f, n)) / n for n in grid], "C1-", label="%s fit" % name)
    a2.axhline(1.0, color="k", ls=":", lw=1)
    a2.set_xlabel(axis)
    a2.set_ylabel("efficiency S/N")
    a2.set_ylim(bottom=0)
    a2.set_title("efficiency")
    a2.legend(fontsize=8)

    scatter(a3, pts, "karp_flatt")
    if strong and f is not None:
        a3.axhline(1.0 - f, color="C1", ls="-", label="1 - f (Amdahl: e constant)")
    trend = fit["karp_flatt_trend"]["trend"]
    a3.set_xlabel(axis)
    a3.set_ylabel("e(N)")
    a3.set_title("Karp-Flatt serial fraction: %s" % trend)
    a3.legend(fontsize=8)

    fig.suptitle("%s %s (%s)" % (fit["variant"], fit["params"], fit["verdict"]["status"]), fontsize=10)
    for a in (a1, a2, a3):
        a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scaling_plots.py RESULTS_DIR")
    folder = sys.argv[1]
    with open(os.path.join(folder, "fits.json")) as fh:
        fits = json.load(fh)
    for i, fit in enumerate(fits):
        plot_series(fit, os.path.join(folder, "scaling-%d.png" % i))


if __name__ == "__main__":
    main()
