#!/usr/bin/python3
"""Self-contained HTML report of a results folder: report.html beside report.md.

Reads the folder's JSON (manifest, check, bench, verdicts, machine, job,
qualification, sweep: those present), draws its plots with matplotlib as SVG
and renders report_html.j2 (jinja2) with them inline: no file or network
access when the page is opened. The summary comes first, then the tables
(sortable by clicking a column header), then the plots.
Usage: report_html.py RESULTS_DIR
"""
import io
import json
import math
import os
import re
import sys
from collections import Counter, OrderedDict

import jinja2
import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.fonttype"] = "path"  # glyphs as paths: no font needed where the page is opened
matplotlib.rcParams["svg.hashsalt"] = "scaleproof"  # stable ids: the same results give the same page
import matplotlib.pyplot as plt  # noqa: E402

UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
NON_FINITE = re.compile(r"(:\s*)-?(nan|inf|infinity)\b", re.IGNORECASE)


def load(folder, name):
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        return None
    with open(path) as f:  # Google Benchmark writes bare nan/inf, which JSON does not allow
        return json.loads(NON_FINITE.sub(r"\1null", f.read()))


def svg(fig):
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]  # drop the XML prologue and doctype: inline SVG in HTML
    return re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.DOTALL)  # creator and date: not the figure


def bench_cases(bench):
    """Per case (family/technique/variant/params): the median aggregate, else the first repetition."""
    chosen = OrderedDict()
    for b in (bench or {}).get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        name = b.get("run_name", b.get("name", ""))
        name = name[:-len("/manual_time")] if name.endswith("/manual_time") else name
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        if b.get("run_type", "iteration") == "iteration" and name in chosen:
            continue
        chosen[name] = b
    rows = []
    for name, b in chosen.items():
        parts = name.split("/", 3)
        if len(parts) < 4 or not isinstance(b.get("real_time"), (int, float)):
            continue
        t = b["real_time"] * UNIT.get(b.get("time_unit", "ns"), 1e-9)
        flop, nbytes = b.get("flop") or 0, b.get("bytes") or 0
        rows.append({"family": parts[0], "technique": parts[1], "variant": parts[2], "params": parts[3], "seconds": t,
                     "flops": flop / t if t > 0 and flop else None, "bps": nbytes / t if t > 0 and nbytes else None,
                     "ai": b.get("AI")})
    return rows


def rank_rows(folder):
    """The per-rank table the harness computed (harness/src/stragglers.cpp) and wrote as ranks.json."""
    return load(folder, "ranks.json") or []


def family_of(technique, cases):
    for c in cases:
        if c["technique"] == technique:
            return c["family"]
    return ""


def plot_verdicts(verdicts, cases):
    per = {}
    for v in verdicts:
        fam = family_of(v.get("technique", ""), cases) or v.get("technique", "")
        per.setdefault(fam, Counter())[v.get("status", "INFO")] += 1
    fams = sorted(per)
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(fams) + 1.2))
    left = [0] * len(fams)
    for status, color in (("PASS", "#2a7"), ("FAIL", "#d33"), ("INFO", "#999")):
        n = [per[f][status] for f in fams]
        ax.barh(fams, n, left=left, color=color, label=status)
        left = [a + b for a, b in zip(left, n)]
    ax.set_xlabel("verdicts")
    ax.legend(fontsize=8)
    ax.set_title("Verdicts per family", fontsize=10)
    return svg(fig)


def plot_ratios(verdicts):
    judged = [v for v in verdicts if v.get("status") in ("PASS", "FAIL") and isinstance(v.get("ratio"), (int, float))
              and v["ratio"] > 0]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    if not judged:  # the plot is still there, saying why it is empty: a run's pages have the same plots
        ax.text(0.5, 0.5, "no judged verdict (every verdict INFO)", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return svg(fig)
    for status, color in (("PASS", "#2a7"), ("FAIL", "#d33")):
        pts = [(i, v["ratio"]) for i, v in enumerate(judged) if v["status"] == status]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, color=color, label=status)
    ax.set_yscale("log")
    ax.set_xlabel("judged verdict (in report order)")
    ax.set_ylabel("judged ratio")
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.legend(fontsize=8)
    ax.set_title("Judged ratio of each verdict (1 = as predicted)", fontsize=10)
    return svg(fig)


def plot_roofline(machine, cases):
    pts = [c for c in cases if c["ai"] and c["flops"] and c["ai"] > 0]
    if not machine or not pts:
        return None
    bw = machine.get("bandwidth_Bps") or 0
    peaks = machine.get("peak_flops") or {}
    fig, ax = plt.subplots(figsize=(7, 4))
    ais = [c["ai"] for c in pts]
    lo, hi = min(ais) / 2, max(ais) * 2
    xs = [lo * (hi / lo) ** (k / 50) for k in range(51)]
    for name, peak in sorted(peaks.items()):
        if bw > 0 and peak:
            ax.plot(xs, [min(peak, bw * x) for x in xs], label="roof %s" % name)
    for fam in sorted({c["family"] for c in pts}):
        sel = [c for c in pts if c["family"] == fam]
        ax.scatter([c["ai"] for c in sel], [c["flops"] for c in sel], s=12, label=fam)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/B)")
    ax.set_ylabel("FLOP/s")
    ax.legend(fontsize=7)
    ax.set_title("Roofline: each case under the roofs measured in this run", fontsize=10)
    return svg(fig)


def plot_sweep(sweep):
    fig, ax = plt.subplots(figsize=(7, 4))
    for s in sweep.get("series", []):
        pts = [p for p in s.get("points", []) if isinstance(p.get("seconds"), (int, float))]
        if pts:
            ax.plot([p["n"] for p in pts], [p["seconds"] for p in pts], "o-", label="%s %s" % (s.get("variant"), s.get("params")))
    ax.set_xlabel(sweep.get("axis", "n"))
    ax.set_ylabel("time (s)")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.set_title("%s: time per %s" % (sweep.get("technique", ""), sweep.get("axis", "n")), fontsize=10)
    return svg(fig)


def si(v, unit):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    pre = ["", "K", "M", "G", "T", "P"]
    i = 0
    while abs(v) >= 1000 and i < 5:
        v /= 1000.0
        i += 1
    return "%.3g %s%s" % (v, pre[i], unit)


def main(folder):
    manifest = load(folder, "manifest.json") or {}
    checks = load(folder, "check.json") or []
    bench = load(folder, "bench.json")
    verdicts = load(folder, "verdicts.json") or []
    machine = load(folder, "machine.json")
    job = load(folder, "job.json")
    qual = load(folder, "qualification.json")
    sweep = load(folder, "sweep.json")
    cases = bench_cases(bench)

    families = OrderedDict()
    for c in checks:
        f = families.setdefault(c.get("family", "") or family_of(c.get("technique", ""), cases),
                                {"passed": 0, "failed": 0, "pass": 0, "fail": 0, "info": 0, "cases": 0})
        f["passed" if c.get("passed") else "failed"] += 1
    for v in verdicts:
        fam = family_of(v.get("technique", ""), cases) or next(
            (c.get("family", "") for c in checks if c.get("technique") == v.get("technique")), "")
        f = families.setdefault(fam, {"passed": 0, "failed": 0, "pass": 0, "fail": 0, "info": 0, "cases": 0})
        f[{"PASS": "pass", "FAIL": "fail"}.get(v.get("status"), "info")] += 1
    for c in cases:
        families.setdefault(c["family"], {"passed": 0, "failed": 0, "pass": 0, "fail": 0, "info": 0, "cases": 0})["cases"] += 1

    failures = ["conformance: %s %s %s%s" % (c.get("technique"), c.get("variant"), c.get("params"),
                                             (": " + c["error"]) if c.get("error") else "")
                for c in checks if not c.get("passed")]
    failures += ["verdict: %s %s %s %s: %s" % (v.get("technique"), v.get("variant"), v.get("params"), v.get("quantity"),
                                                v.get("note", "")) for v in verdicts if v.get("status") == "FAIL"]
    failures += ["criterion: %s: %s" % (c.get("name"), c.get("detail")) for c in (qual or {}).get("criteria", [])
                 if c.get("status") == "FAIL"]

    plots = []
    if verdicts:
        plots.append(("verdicts", "Verdicts per family", plot_verdicts(verdicts, cases)))
        plots.append(("ratios", "Judged ratios", plot_ratios(verdicts)))
    roof = plot_roofline(machine, cases)
    if roof:
        plots.append(("roofline", "Roofline", roof))
    if sweep:
        plots.append(("sweep", "Scaling sweep", plot_sweep(sweep)))

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.dirname(os.path.abspath(__file__))),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["si"] = si
    env.filters["g"] = lambda v: "-" if not isinstance(v, (int, float)) else "%.4g" % v
    html = env.get_template("report_html.j2").render(
        title=os.path.basename(os.path.normpath(folder)), manifest=manifest, machine=machine, job=job,
        families=families, failures=failures, checks=checks, cases=cases, verdicts=verdicts,
        qualification=qual, plots=plots, ranks=rank_rows(folder),
        totals={"checks": len(checks), "checks_failed": sum(1 for c in checks if not c.get("passed")),
                "cases": len(cases), "verdicts": len(verdicts),
                "verdicts_failed": sum(1 for v in verdicts if v.get("status") == "FAIL")})
    tmp = os.path.join(folder, ".report.html.tmp")
    with open(tmp, "w") as f:
        f.write(html)
    os.replace(tmp, os.path.join(folder, "report.html"))


if __name__ == "__main__":
    main(sys.argv[1])
