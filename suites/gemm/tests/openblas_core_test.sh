#!/usr/bin/env bash
# openblas_core_test.sh SCALEPROOF: a GEMM bench run's manifest names an
# OpenBLAS core at this CPU's vector level (read here from /proc/cpuinfo),
# whatever core the library's own detection chose; and a user's
# OPENBLAS_CORETYPE is kept as set, the facts then saying (not_at_best) when it
# is below the CPU's level, so that ratios against it are not judged.
set -euo pipefail
bin=$1
source "$(dirname "$0")/../../../harness/tests/vendor_facts.sh"
VENDOR_UNSET="OPENBLAS_CORETYPE SCALEPROOF_VENDOR_ENV"
facts() { vendor_facts "$bin" "$1" openblas "core|core_rule|not_at_best" gemm small "${@:2}"; }
level=1
if cpu_has avx2 fma; then level=3; fi
if cpu_has avx512f avx512cd avx512bw avx512dq avx512vl; then level=4; fi
case $level in
  4) ok="skylakex cooperlake sapphirerapids" ;;
  3) ok="haswell zen skylakex cooperlake sapphirerapids" ;;
  *) echo "openblas_core_test: no AVX2 here, nothing to check"; exit 0 ;;
esac
got=$(facts plain)
core=${got%%|*}
lower=$(tr '[:upper:]' '[:lower:]' <<<"$core")
if [[ " $ok " != *" $lower "* || "$got" != *"|-" ]]; then
  echo "FAIL: OpenBLAS ran core '$core' (${got#*|}) on a CPU whose level wants one of: $ok"
  exit 1
fi
echo "ok: core $core (${got#*|})"
got=$(facts user OPENBLAS_CORETYPE=Haswell)
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
