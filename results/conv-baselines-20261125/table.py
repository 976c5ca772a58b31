"""Fair-baseline table of a `scaleproof run` results folder (verdicts.json),
or, with --bench, of a `scaleproof bench` folder (bench.json: the fastest
call of each variant over all repetitions, and the ratio oneDNN / kokkos).
Usage: python3 table.py FOLDER [--bench]"""
import json
import sys

folder = sys.argv[1]
if "--bench" in sys.argv:
    best = {}
    for b in json.load(open(folder + "/bench.json"))["benchmarks"]:
        parts = b["name"].split("/")
        if b.get("run_type") != "iteration" or parts[0] != "conv":
            continue
        key = (parts[1], parts[2])
        best[key] = min(best.get(key, 1e30), b["t_min_s"])
    print("| technique | kokkos min us | onednn min us | onednn_plain min us | onednn / kokkos |")
    print("|---|---:|---:|---:|---:|")
    for tech in sorted({k[0] for k in best}):
        k, o, p = best[(tech, "kokkos")], best[(tech, "onednn")], best[(tech, "onednn_plain")]
        print(f"| {tech} | {k * 1e6:.1f} | {o * 1e6:.1f} | {p * 1e6:.1f} | {o / k:.3f} |")
    sys.exit(0)
rows = json.load(open(folder + "/verdicts.json"))
rows = rows if isinstance(rows, list) else rows["verdicts"]
conv = ("conv2d", "conv_im2col", "conv_depthwise", "conv_pointwise")
t = {(v["technique"], v["variant"]): v for v in rows if v["technique"] in conv and v["quantity"] == "roofline time"}
vs = {v["technique"]: v for v in rows if v["technique"] in conv and v["quantity"] == "throughput vs onednn"}
print("| technique | shape | oneDNN picked (any) | kokkos ms | onednn ms | onednn_plain ms | vs onednn | verdict | kokkos % of roof | roof verdict |")
print("|---|---|---|---:|---:|---:|---:|---|---:|---|")
for tech in conv:
    if tech not in vs:
        continue
    k, o, p = t[(tech, "kokkos")], t[(tech, "onednn")], t[(tech, "onednn_plain")]
    picked = o["note"].split("oneDNN ", 1)[1]
    print(f"| {tech} | {k['params']} | {picked} | {k['measured'] * 1e3:.3f} | {o['measured'] * 1e3:.3f} | "
          f"{p['measured'] * 1e3:.3f} | {vs[tech]['measured']:.3f} (target {vs[tech]['band_lo']}) | {vs[tech]['status']} | "
          f"{100 * k['ratio']:.1f} | {k['status']} (band {k['band_lo']}) |")
