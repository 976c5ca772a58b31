#!/usr/bin/env bash
# ci/build.sh [PRESET] [TARGET...]: bootstrap what is missing, configure and
# build a preset (default: default), all targets or the ones named.
# Incremental: a second call rebuilds only what changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
preset=${1:-default}
shift || true
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cd "$root"
if [[ "$preset" == cuda ]]; then
  ci/bootstrap.sh --cuda
  export PATH=/usr/local/cuda/bin:$PATH
else
  ci/bootstrap.sh
fi
[[ -f build/$preset/build.ninja ]] || cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)" "${targets[@]}"
