#!/usr/bin/env bash
# onednn_isa_test.sh SCALEPROOF: a conv bench run's manifest names the ISA
# oneDNN dispatched to; left alone it is the CPU's level (no not_at_best),
# and capped below it by the user's ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512
# CPU the facts say not_at_best, so that ratios against it are not judged.
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench() {  # bench NAME [VAR=VALUE...]: one short conv run, its manifest's oneDNN facts as "isa|not_at_best"
  local name=$1
  shift
  env -u ONEDNN_MAX_CPU_ISA -u DNNL_MAX_CPU_ISA "$@" "$bin" --threads 1 bench -t conv_pointwise --size conformance \
    --min-time 0.001 -r 1 --db none --out "$tmp" --name "$name" >/dev/null 2>"$tmp/$name.err" ||
    { cat "$tmp/$name.err"; exit 1; }
  python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))["vendors"]["onednn"]; print(o["isa"] + "|" + o.get("not_at_best", "-"))' \
    "$tmp/$name/manifest.json"
}
flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
has() { [[ " $flags " == *" $1 "* ]]; }
got=$(bench plain)
if [[ "$got" != *"|-" ]]; then
  echo "FAIL: oneDNN left alone is reported below this CPU's level: $got"
  exit 1
fi
echo "ok: oneDNN left alone: $got"
if ! (has avx512f && has avx512cd && has avx512bw && has avx512dq && has avx512vl); then
  echo "onednn_isa_test: no AVX-512 here, no lower cap to check"
  exit 0
fi
got=$(bench capped ONEDNN_MAX_CPU_ISA=AVX2)
if [[ "$got" != "avx2|ISA avx2 dispatched where this CPU has avx512_core" ]]; then
  echo "FAIL: with the user's ONEDNN_MAX_CPU_ISA=AVX2 the manifest says '$got'"
  exit 1
fi
echo "ok: ONEDNN_MAX_CPU_ISA=AVX2 reported: $got"
