#!/usr/bin/env bash
# One-stop dependency bootstrap: Debian packages, then Kokkos (Serial+OpenMP,
# optionally CUDA). Idempotent: every step checks before it acts, and Kokkos
# installs are cached outside the checkout (SCALEPROOF_CACHE).
#
#   ci/bootstrap.sh            packages + Kokkos OpenMP
#   ci/bootstrap.sh --cuda     also the patched Kokkos CUDA build (compile-only here)
#
# Prints the Kokkos install prefixes it prepared as KEY=VALUE lines on fd 3
# when fd 3 is open (used by ci/env.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
want_cuda=0
for a in "$@"; do
  case "$a" in
    --cuda) want_cuda=1 ;;
    *) echo "bootstrap: unknown option '$a'" >&2; exit 2 ;;
  esac
done

"$here/install-packages.sh"

if [[ -n "${Kokkos_ROOT:-}" ]]; then
  echo "bootstrap: using your Kokkos at Kokkos_ROOT=$Kokkos_ROOT"
else
  "$here/kokkos.sh" openmp
fi
if (( want_cuda )); then
  if [[ -x /usr/local/cuda/bin/nvcc ]]; then
    "$here/kokkos.sh" cuda
  else
    echo "bootstrap: no nvcc at /usr/local/cuda; skipping the CUDA Kokkos build"
  fi
fi
