#!/usr/bin/env bash
# onednn_isa_test.sh SCALEPROOF: a conv bench run's manifest names the ISA
# oneDNN dispatched to; left alone it is the CPU's level (no not_at_best),
# and capped below it by the user's ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512
# CPU the facts say not_at_best, so that ratios against it are not judged.
set -euo pipefail
bin=$1
source "$(dirname "$0")/../../../harness/tests/vendor_facts.sh"
VENDOR_UNSET="ONEDNN_MAX_CPU_ISA DNNL_MAX_CPU_ISA"
facts() { vendor_facts "$bin" "$1" onednn "isa|not_at_best" conv_pointwise conformance "${@:2}"; }
got=$(facts plain)
if [[ "$got" != *"|-" ]]; then
  echo "FAIL: oneDNN left alone is reported below this CPU's level: $got"
  exit 1
fi
echo "ok: oneDNN left alone: $got"
if ! cpu_has avx512f avx512cd avx512bw avx512dq avx512vl; then
  echo "onednn_isa_test: no AVX-512 here, no lower cap to check"
  exit 0
fi
got=$(facts capped ONEDNN_MAX_CPU_ISA=AVX2)
if [[ "$got" != "avx2|ISA avx2 dispatched where this CPU has avx512_core" ]]; then
  echo "FAIL: with the user's ONEDNN_MAX_CPU_ISA=AVX2 the manifest says '$got'"
  exit 1
fi
echo "ok: ONEDNN_MAX_CPU_ISA=AVX2 reported: $got"
