#!/usr/bin/env bash
# Obtains Kokkos 3.4.01 from Debian bookworm's `trilinos` source package and
# builds it into a cache outside the checkout (see ../../shared/KOKKOS.md for why:
# bookworm has no standalone Kokkos package with OpenMP/CUDA).
#
#   ci/kokkos.sh openmp    Serial + OpenMP, Release      -> $CACHE/kokkos-3.4.01-openmp
#   ci/kokkos.sh cuda      Serial + CUDA (patched, nvcc) -> $CACHE/kokkos-3.4.01-cuda
#   ci/kokkos.sh source    only leave the extracted source in the cache
#   ci/kokkos.sh carry DIR a CUDA-patched copy of the source in DIR (about 12 MB), to carry
#                          to a GPU machine without the package archive and build there
#                          (ignored by git when DIR is under .carry/)
#
# The archive URI comes from the system's apt configuration; no host name is
# written here. The system's apt state is not touched (private lists dir).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
variant=${1:-openmp}
cache=${SCALEPROOF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scaleproof}
version=3.4.01
src=$cache/kokkos-$version-src
prefix=$cache/kokkos-$version-$variant
mkdir -p "$cache"

if [[ "$variant" != source && "$variant" != carry && -f "$prefix/.complete" ]]; then
  echo "kokkos: cached $variant build at $prefix"
  exit 0
fi

fetch_source() {
  [[ -f "$src/.complete" ]] && return 0
  local work=$cache/apt-src
  rm -rf "$work"; mkdir -p "$work/lists/partial" "$work/dl"
  local uri
  uri=$("$here/archive-uri.sh") || { echo "kokkos: cannot fetch the trilinos source" >&2; exit 1; }
  echo "deb-src $uri bookworm main" > "$work/sources.list"
  local opts=(-q -o APT::Sandbox::User=root -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/nonexistent
              -o "Dir::State::Lists=$work/lists")
  echo "kokkos: fetching the trilinos source package (about 165 MB, once)"
  apt-get "${opts[@]}" update >/dev/null
  (cd "$work/dl" && apt-get "${opts[@]}" source --download-only trilinos) >"$work/source.log" 2>&1 \
    || { cat "$work/source.log" >&2; echo "kokkos: apt-get source trilinos failed" >&2; exit 1; }
  local tarball
  tarball=$(ls "$work"/dl/trilinos_*.orig.tar.* | head -n1)
  rm -rf "$src.tmp"; mkdir -p "$src.tmp"
  tar -xf "$tarball" -C "$src.tmp" --wildcards --strip-components=3 '*/packages/kokkos/*'
  grep -q "set(Kokkos_VERSION_MINOR 4)" "$src.tmp/CMakeLists.txt" || { echo "kokkos: unexpected version in source" >&2; exit 1; }
  rm -rf "$src"; mv "$src.tmp" "$src"; touch "$src/.complete"
  rm -rf "$work"   # the 165 MB tarball is not needed again
}

fetch_source
[[ "$variant" == source ]] && { echo "kokkos: source at $src"; exit 0; }
if [[ "$variant" == carry ]]; then
  dest=${2:?usage: ci/kokkos.sh carry DIR}
  rm -rf "$dest"; mkdir -p "$(dirname "$dest")"; cp -a "$src" "$dest"
  "$here/patch-kokkos-cuda.sh" "$dest" "${SCALEPROOF_CUDA_ARCH:-90}" >/dev/null
  echo "kokkos: CUDA-ready source at $dest"
  exit 0
fi

build=$cache/build-kokkos-$variant
rm -rf "$build" "$prefix"
jobs=$(nproc)
common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DCMAKE_INSTALL_PREFIX="$prefix"
        -DKokkos_ENABLE_SERIAL=ON -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
case "$variant" in
  openmp)
    cmake -S "$src" -B "$build" "${common[@]}" -DKokkos_ENABLE_OPENMP=ON >/dev/null ;;
  cuda)
    # nvcc 13 needs four small fixes to Kokkos 3.4; they are applied to a
    # private copy, never to anything checked in (see patch-kokkos-cuda.sh).
    csrc=$cache/kokkos-$version-src-cuda
    rm -rf "$csrc"; cp -a "$src" "$csrc"
    arch=${SCALEPROOF_CUDA_ARCH:-90}
    "$here/patch-kokkos-cuda.sh" "$csrc" "$arch"
    # Kokkos 3.4 knows no arch newer than Ampere. Its Kokkos_ARCH_* option
    # puts -arch=sm_NN on the library and on every target linking
    # Kokkos::kokkos; nvcc_wrapper refuses a second, different -arch (so no
    # -arch in CMAKE_CXX_FLAGS). For 9.0 and newer, patch-kokkos-cuda.sh
    # makes the AMPERE80 option emit that architecture's machine code.
    case "$arch" in
      75) karch=TURING75 ;;
      86|87|89) karch=AMPERE86 ;;
      *) karch=AMPERE80 ;;
    esac
    export PATH=/usr/local/cuda/bin:$PATH
    cmake -S "$csrc" -B "$build" "${common[@]}" -DCMAKE_CXX_COMPILER="$csrc/bin/nvcc_wrapper" \
      -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON "-DKokkos_ARCH_$karch=ON" >/dev/null ;;
  *) echo "kokkos: unknown variant '$variant' (openmp|cuda|source)" >&2; exit 2 ;;
esac
echo "kokkos: building $variant ($jobs jobs)"
cmake --build "$build" -j "$jobs" >/dev/null
cmake --install "$build" >/dev/null
rm -rf "$build"
touch "$prefix/.complete"
echo "kokkos: installed $variant at $prefix"
