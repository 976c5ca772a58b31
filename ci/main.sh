#!/usr/bin/env bash
# The main job (README): set up what is missing, build, then run the default
# suite on this machine (`scaleproof run`: conformance, benchmarks, roofline,
# verdicts) with embedded defaults; the report lands in results/<timestamp>/.
# Extra arguments go to `scaleproof run`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
ci/build.sh default
exec build/default/harness/scaleproof run --out "$root/results" "$@"
