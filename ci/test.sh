#!/usr/bin/env bash
# The test command (README, .ci/run): set up what is missing, build, check the
# C++ layout (ci/format-check.sh) and that header functions holding a
# KOKKOS_LAMBDA are marked SP_UNIT_LOCAL (ci/lambda-linkage-check.py), run every
# CTest test (unit, cli, conformance at 1-4 ranks, benchmark smoke), then
# compile the CUDA preset when nvcc is present so CUDA breakage is caught
# even on machines without a GPU (nothing CUDA runs here).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
start=$(date +%s)
ci/build.sh default
ci/format-check.sh
ci/lambda-linkage-check.py
ctest --preset default
echo "ctest: $(( $(date +%s) - start )) s since start"
if [[ -x /usr/local/cuda/bin/nvcc && "${SP_SKIP_CUDA_BUILD:-0}" != 1 ]]; then
  # The scaleproof target compiles every family's kernels and the harness
  # through nvcc; the test executables add nothing CUDA-specific.
  echo "cuda preset: compile-only check"
  ci/build.sh cuda scaleproof >/dev/null
  echo "cuda preset: compiled and linked"
fi
echo "total: $(( $(date +%s) - start )) s"
