import json, sys
def table(d):
    b = json.load(open(f"{d}/bench.json"))["benchmarks"]
    v = json.load(open(f"{d}/verdicts.json"))
    t = {}
    for r in b:
        n = r.get("name", "")
        if n.startswith("gemm/gemm/") and n.endswith("/manual_time_median"):
            _, _, var, params = n.split("/")[:4]
            t[(var, params)] = r["real_time"] * 1e-6
    rows = []
    for x in v:
        if x["technique"] == "gemm" and x["quantity"] == "throughput vs openblas":
            p = x["params"]
            d_, m, n_, k = [kv.split("=")[1] for kv in p.split(",")]
            rows.append((d_, int(m), int(n_), int(k), t.get(("kokkos", p)), t.get(("openblas", p)), x["measured"], x["status"]))
    rows.sort()
    print("| dtype | M | N | K | project s (median of 3 reps) | OpenBLAS s (median of 3 reps) | throughput vs OpenBLAS (paired, 9 calls in turn) | verdict (band >= 0.5) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.4g} | {r[5]:.4g} | {r[6]:.3f} | {r[7]} |")
table(sys.argv[1])
