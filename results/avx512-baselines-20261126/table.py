"""table.py: the vendor-ratio and roof tables of this folder's four runs (Markdown)."""
import json
import sys


def median_rows(d):
    return [b for b in json.load(open(d + "/bench.json"))["benchmarks"] if b.get("aggregate_name") == "median"]


def main():
    print("| run | commit | OpenBLAS core | fp32 peak (GFLOP/s) | fp64 peak |")
    print("|---|---|---|---|---|")
    for d in ["gemm-before", "gemm-after", "conv-before", "conv-after"]:
        m = json.load(open(d + "/manifest.json"))
        peaks = {b["name"].split("/")[3].split(",")[0]: b["FLOPS"] / 1e9 for b in median_rows(d) if "fma_peak" in b["name"]}
        print(f"| {d} | {m['git_commit'][:7]} | {m['vendors']['openblas']['core']} | {peaks.get('dtype=fp32', 0):.0f} | {peaks.get('dtype=fp64', 0):.0f} |")
    for kind in ["gemm", "conv"]:
        print()
        print("| technique | case | before: ratio | before: project ms | after: ratio | after: project ms | vendor implementation (after) |")
        print("|---|---|---|---|---|---|---|")
        runs = {s: json.load(open(f"{kind}-{s}/verdicts.json")) for s in ["before", "after"]}
        keys = [(v["technique"], v["params"]) for v in runs["after"] if v["quantity"].startswith("throughput vs")]
        for t, p in keys:
            cells = []
            impl = ""
            for s in ["before", "after"]:
                r = next(v for v in runs[s] if v["technique"] == t and v["params"] == p and v["quantity"].startswith("throughput vs"))
                tm = next(v for v in runs[s] if v["technique"] == t and v["params"] == p and v["variant"] == "kokkos" and v["quantity"] == "roofline time")
                cells += [f"{r['measured']:.3f} ({r['status']})", f"{tm['measured'] * 1e3:.3f}"]
                for v in runs[s]:
                    if v["technique"] == t and v["params"] == p and v["variant"] not in ("kokkos",) and v["quantity"] == "roofline time" and "oneDNN" in v["note"]:
                        if s == "after" and v["variant"] == "onednn":
                            impl = v["note"].split("; ")[-1]
            if kind == "gemm":
                impl = json.load(open("gemm-after/manifest.json"))["vendors"]["openblas"]["core"]
            print(f"| {t} | {p} | " + " | ".join(cells) + f" | {impl} |")


if __name__ == "__main__":
    sys.exit(main())
