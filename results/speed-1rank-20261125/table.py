#!/usr/bin/env python3
"""python3 table.py RESULTS_FOLDER: the "fraction of GEMM rate" verdicts of a
results folder as a Markdown table (technique, variant, parameters, the
technique's FLOP/s, the project's GEMM at the same shapes, ratio, band, status)."""
import json
import os
import sys

rows = [v for v in json.load(open(os.path.join(sys.argv[1], "verdicts.json")))
        if v.get("quantity") == "fraction of GEMM rate"]
print("| technique | variant | parameters | GFLOP/s | GEMM at its shapes, GFLOP/s | ratio | band | status |")
print("|---|---|---|---:|---:|---:|---|---|")
for v in sorted(rows, key=lambda v: (v["technique"], v["variant"], v["params"])):
    print("| %s | %s | %s | %.2f | %.2f | %.2f | >= %.2f | %s |" % (
        v["technique"], v["variant"], v["params"], v["measured"] * 1e-9, v["predicted"] * 1e-9, v["ratio"],
        v["band_lo"], v["status"]))
