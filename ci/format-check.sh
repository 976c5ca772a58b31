#!/usr/bin/env bash
# Every tracked C++ source laid out as .clang-format says. The layout is
# clang-format 14's (Debian bookworm's, in ci/packages.txt): another major
# version lays some constructs out differently, so it is refused rather than
# reporting differences that are not the contributor's.
#
#   ci/format-check.sh         list the files that differ; exit 1 if any
#   ci/format-check.sh --fix   rewrite them in place
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
for a in "$@"; do
  case "$a" in
    --fix) fix=1 ;;
    *) echo "format-check: unknown option '$a'" >&2; exit 2 ;;
  esac
done
tool=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z "$tool" ]]; then
  echo "format-check: clang-format 14 is not installed (ci/install-packages.sh installs it)" >&2
  exit 2
fi
major=$("$tool" --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [[ "$major" != 14 ]]; then
  echo "format-check: $tool is version ${major:-unknown}; the layout is clang-format 14's" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu')
if (( fix )); then
  "$tool" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$tool" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if (( ${#bad[@]} )); then
  printf 'format-check: not laid out as .clang-format says: %s\n' "${bad[@]}" >&2
  echo "format-check: ${#bad[@]} file(s); ci/format-check.sh --fix rewrites them" >&2
  exit 1
fi
echo "format-check: ${#files[@]} files laid out as .clang-format says"
