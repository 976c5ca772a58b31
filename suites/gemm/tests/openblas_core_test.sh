#!/usr/bin/env bash
# openblas_core_test.sh SCALEPROOF: a GEMM bench run's manifest names an
# OpenBLAS core at this CPU's vector level (read here from /proc/cpuinfo),
# whatever core the library's own detection chose; and a user's
# OPENBLAS_CORETYPE is kept as set, the facts then saying (not_at_best) when it
# is below the CPU's level, so that ratios against it are not judged.
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench() {  # bench NAME [VAR=VALUE...]: one short GEMM run, its manifest's OpenBLAS facts as "core|rule|not_at_best"
  local name=$1
  shift
  env -u OPENBLAS_CORETYPE -u SCALEPROOF_VENDOR_ENV "$@" "$bin" --threads 1 bench -t gemm --size small \
    --min-time 0.001 -r 1 --db none --out "$tmp" --name "$name" >/dev/null 2>"$tmp/$name.err" ||
    { cat "$tmp/$name.err"; exit 1; }
  python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))["vendors"]["openblas"]; print(o["core"] + "|" + o["core_rule"] + "|" + o.get("not_at_best", "-"))' \
    "$tmp/$name/manifest.json"
}
flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
has() { [[ " $flags " == *" $1 "* ]]; }
level=1
if has avx2 && has fma; then level=3; fi
if has avx512f && has avx512cd && has avx512bw && has avx512dq && has avx512vl; then level=4; fi
case $level in
  4) ok="skylakex cooperlake sapphirerapids" ;;
  3) ok="haswell zen skylakex cooperlake sapphirerapids" ;;
  *) echo "openblas_core_test: no AVX2 here, nothing to check"; exit 0 ;;
esac
got=$(bench plain)
core=${got%%|*}
lower=$(tr '[:upper:]' '[:lower:]' <<<"$core")
if [[ " $ok " != *" $lower "* || "$got" != *"|-" ]]; then
  echo "FAIL: OpenBLAS ran core '$core' (${got#*|}) on a CPU whose level wants one of: $ok"
  exit 1
fi
echo "ok: core $core (${got#*|})"
got=$(bench user OPENBLAS_CORETYPE=Haswell)
if [[ $level == 4 ]]; then
  want="Haswell|OPENBLAS_CORETYPE=Haswell as set|core Haswell runs where this CPU takes "
else
  want="Haswell|OPENBLAS_CORETYPE=Haswell as set|-"
fi
if [[ "$got" != "$want"* ]]; then
  echo "FAIL: with the user's OPENBLAS_CORETYPE=Haswell the manifest says '$got', not '$want...'"
  exit 1
fi
echo "ok: the user's OPENBLAS_CORETYPE=Haswell kept ($got)"
