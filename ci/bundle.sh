#!/usr/bin/env bash
# ci/bundle.sh [--preset all|default|cuda] OUT.tar.gz
#
# Run where Debian's package archive is reachable. Packs what a machine
# without the archive needs to build and run the project (ci/offline-setup.sh
# unpacks it there):
#   source/        the project at HEAD (git archive: committed files only)
#   kokkos-src/    the Kokkos 3.4.01 source (unpatched; ci/kokkos.sh source)
#   debs/          the Debian packages of ci/packages.txt that a target does not
#                  bring itself, with their run-time dependencies (MPICH's
#                  launcher hydra included), from this machine's apt sources
#   MANIFEST       bundle format, architecture, Debian release, commit, Kokkos
#                  version, then one line per package: name version sha256 file
#
# What every target is assumed to have is left out: the packages of priority
# required/important and build-essential's closure (libc6, libstdc++6,
# libgcc-s1, libgomp1, g++...), CMake, ninja, pkg-config, git, Python and its
# packages; the tools only CI runs (clang-format, chromium); and the
# compilers that the -dev packages name but building against them never runs
# (gfortran, autoconf/automake, m4). Dependencies are resolved by apt itself,
# simulating an install onto a status file that holds only that base set.
#
# --preset cuda leaves out OpenBLAS and oneDNN, the CPU baselines that the
# cuda preset does not build (a smaller bundle to carry to a GPU machine).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
preset=all
out=""
while (($#)); do
  case "$1" in
    --preset) preset=${2:-}; shift 2 ;;
    --preset=*) preset=${1#*=}; shift ;;
    -h|--help) sed -n 2,25p "$0"; exit 0 ;;
    -*) echo "bundle: error: unknown option '$1'" >&2; exit 2 ;;
    *) [[ -z "$out" ]] || { echo "bundle: error: one output file, got '$out' and '$1'" >&2; exit 2; }; out=$1; shift ;;
  esac
done
[[ -n "$out" ]] || { echo "bundle: error: usage: ci/bundle.sh [--preset all|default|cuda] OUT.tar.gz" >&2; exit 2; }
[[ "$out" == *.tar.gz ]] || { echo "bundle: error: the output must end in .tar.gz, got '$out'" >&2; exit 2; }
case "$preset" in all|default|cuda) ;; *) echo "bundle: error: unknown preset '$preset' (all, default or cuda)" >&2; exit 2 ;; esac
outdir=$(cd "$(dirname "$out")" 2>/dev/null && pwd) || { echo "bundle: error: no directory for '$out'" >&2; exit 2; }
command -v apt-get >/dev/null || { echo "bundle: error: apt-get not found: run this where Debian's archive is reachable" >&2; exit 2; }
git -C "$root" rev-parse HEAD >/dev/null 2>&1 || { echo "bundle: error: $root is not a git checkout" >&2; exit 2; }

# Packages the target brings itself (toolchain, git, Python and its
# packages), the tools only CI runs (the format check, the HTML report's
# browser test), and the CPU baselines that only the default preset builds.
target_has='^(build-essential|cmake|ninja-build|pkg-config|git|python3|python3-[a-z0-9]+|xz-utils)$'
ci_only='^(chromium|clang-format)$'
cpu_baselines='^(libopenblas-dev|libdnnl-dev)$'
# Compilers and generators that -dev packages depend on but that building
# against their libraries never runs.
never_run='^(gfortran(-[0-9]+)?|libgfortran-[0-9]+-dev|autoconf|automake|autotools-dev|m4)$'

mapfile -t wanted < <(grep -vE '^\s*(#|$)' "$root/ci/packages.txt" | grep -vE "$target_has" | grep -vE "$ci_only" |
                      { if [[ "$preset" == cuda ]]; then grep -vE "$cpu_baselines"; else cat; fi; })

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
b=$work/scaleproof-bundle
mkdir -p "$b/debs" "$b/source"

# The base set: installed packages of priority required/important plus
# build-essential, closed under Depends/Pre-Depends (among installed ones).
dpkg-query -W -f='${Package}\n' | sort -u >"$work/installed"
{ dpkg-query -W -f='${Package} ${Priority}\n' | awk '$2=="required"||$2=="important"{print $1}'; echo build-essential; } |
  sort -u >"$work/seed"
apt-cache depends --recurse -i $(cat "$work/seed") 2>/dev/null | grep -v '^[ <]' | sort -u |
  comm -12 - "$work/installed" >"$work/base"
python3 - "$work/base" "$work/status" <<'PY'
import sys
base = set(open(sys.argv[1]).read().split())
keep = []
for para in open("/var/lib/dpkg/status").read().split("\n\n"):
    name = next((l.split()[1] for l in para.splitlines() if l.startswith("Package: ")), None)
    if name in base:
        keep.append(para.strip())
open(sys.argv[2], "w").write("\n\n".join(keep) + "\n")
PY
apt-get -s -q -o Dir::State::status="$work/status" install --no-install-recommends "${wanted[@]}" >"$work/sim" 2>&1 ||
  { echo "bundle: error: apt cannot resolve ${wanted[*]}:" >&2; tail -n 5 "$work/sim" >&2; exit 1; }
awk '/^Inst /{print $2}' "$work/sim" | grep -vE "$never_run" | sort -u >"$work/pkgs"
echo "bundle: ${#wanted[@]} packages asked for (${wanted[*]}); $(wc -l <"$work/pkgs") with dependencies"
(cd "$b/debs" && apt-get download -q -o APT::Sandbox::User=root $(cat "$work/pkgs") >/dev/null)

"$root/ci/kokkos.sh" source >/dev/null
cache=${SCALEPROOF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scaleproof}
cp -a "$cache/kokkos-3.4.01-src" "$b/kokkos-src"
rm -f "$b/kokkos-src/.complete"
git -C "$root" archive HEAD | tar -x -C "$b/source"

{
  echo "format 1"
  echo "arch $(dpkg --print-architecture)"
  echo "release $(. /etc/os-release && echo "${VERSION_CODENAME:-unknown}")"
  echo "preset $preset"
  echo "commit $(git -C "$root" rev-parse HEAD)"
  echo "kokkos 3.4.01"
  echo "created $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  for f in "$b"/debs/*.deb; do
    echo "deb $(dpkg-deb -f "$f" Package) $(dpkg-deb -f "$f" Version) $(sha256sum "$f" | cut -d' ' -f1) $(basename "$f")"
  done
} >"$b/MANIFEST"

tmp=$outdir/.$(basename "$out").tmp-$$
tar -C "$work" -czf "$tmp" scaleproof-bundle
mv "$tmp" "$outdir/$(basename "$out")"
echo "bundle: $outdir/$(basename "$out"): $(du -m "$outdir/$(basename "$out")" | cut -f1) MiB, $(ls "$b/debs" | wc -l) packages, commit $(git -C "$root" rev-parse --short HEAD)"
