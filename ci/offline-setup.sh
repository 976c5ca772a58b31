#!/usr/bin/env bash
# ci/offline-setup.sh --bundle B.tar.gz [--prefix DIR] [--cuda|--cpu] [--source DIR]
#                     [--build-dir DIR] [--no-tests] [-j N] [--check-only]
#
# Sets the project up on a machine without the package archive, without root
# and without network, from a bundle made by ci/bundle.sh:
#   1. checks the bundle (architecture, every package present, checksums) and
#      the machine (cmake, ninja, a C++ compiler; nvcc for --cuda);
#   2. unpacks the bundle's Debian packages into PREFIX/root (never into /) and
#      makes them usable from there: MPICH's compiler wrappers and its hydra
#      launcher, pkg-config and CMake files rewritten to the prefix, the links
#      that Debian's alternatives would make; PREFIX/env.sh sets PATH,
#      LD_LIBRARY_PATH and UCX_MODULE_DIR for running;
#   3. builds Kokkos 3.4.01 from the bundle (Serial+OpenMP, or Serial+CUDA for
#      the GPU's compute capability as the driver reports it);
#   4. configures and builds the matching preset (default, or cuda) of the
#      bundle's source, or of --source DIR (e.g. a checkout), finding cuBLAS,
#      cuDNN and NCCL in the CUDA toolkit or else in a Python environment's
#      nvidia-* packages.
# --check-only stops after step 1 (and what it found), writing nothing.
# It prints what it found and what it skips. --cuda is the default when nvcc
# is found (PATH, NVCC, /usr/local/cuda/bin). Bad input (a bundle for another
# architecture, a package missing or corrupt, --cuda without nvcc): one line
# `offline-setup: error: ...`, exit 2, nothing written.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "offline-setup: error: $*" >&2; exit 2; }
say() { echo "offline-setup: $*"; }

bundle="" prefix=${SCALEPROOF_OFFLINE_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/scaleproof-offline}
mode=auto source="" builddir="" tests=1 jobs=$(nproc) check_only=0
while (($#)); do
  case "$1" in
    --bundle) bundle=${2:-}; shift 2 ;;
    --prefix) prefix=${2:-}; shift 2 ;;
    --source) source=${2:-}; shift 2 ;;
    --build-dir) builddir=${2:-}; shift 2 ;;
    --cuda) mode=cuda; shift ;;
    --cpu) mode=cpu; shift ;;
    --no-tests) tests=0; shift ;;
    --check-only) check_only=1; shift ;;
    -j) jobs=${2:-}; shift 2 ;;
    -h|--help) sed -n 2,25p "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

# ---- checks: everything before anything is written ------------------------
[[ -n "$bundle" ]] || die "--bundle FILE.tar.gz is required (made by ci/bundle.sh)"
[[ -f "$bundle" || -d "$bundle" ]] || die "bundle '$bundle' not found"
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "-j needs a positive number, got '$jobs'"
[[ -n "$prefix" && "$prefix" != / ]] || die "--prefix must name a directory other than /"
for tool in cmake ninja tar sha256sum; do command -v "$tool" >/dev/null || die "'$tool' not found on PATH"; done
command -v c++ >/dev/null || command -v g++ >/dev/null || die "no C++ compiler (c++ or g++) on PATH"
command -v dpkg-deb >/dev/null || command -v ar >/dev/null || die "neither dpkg-deb nor ar found: cannot unpack .deb files"

if [[ -n "${NVCC:-}" ]]; then nvcc=$NVCC; else nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc); fi
[[ -x "$nvcc" ]] || nvcc=""
case "$mode" in
  cuda) [[ -n "$nvcc" ]] || die "--cuda asked for, but nvcc was not found (PATH, NVCC, /usr/local/cuda/bin)" ;;
  auto) mode=cpu; [[ -n "$nvcc" ]] && mode=cuda ;;
esac

stage=$(mktemp -d "${TMPDIR:-/tmp}/scaleproof-offline.XXXXXX")
trap 'rm -rf "$stage"' EXIT
if [[ -d "$bundle" ]]; then
  b=$(cd "$bundle" && pwd)
else
  tar -xzf "$bundle" -C "$stage" 2>/dev/null || die "bundle '$bundle' is not a readable .tar.gz"
  b=$stage/scaleproof-bundle
fi
[[ -f "$b/MANIFEST" ]] || die "bundle '$bundle' has no MANIFEST (not made by ci/bundle.sh?)"
field() { awk -v k="$1" '$1==k{print $2; exit}' "$b/MANIFEST"; }
[[ "$(field format)" == 1 ]] || die "bundle '$bundle': unknown MANIFEST format '$(field format)'"
march=$(command -v dpkg >/dev/null && dpkg --print-architecture 2>/dev/null || true)
if [[ -z "$march" ]]; then
  case "$(uname -m)" in x86_64) march=amd64 ;; aarch64) march=arm64 ;; *) march=$(uname -m) ;; esac
fi
[[ "$(field arch)" == "$march" ]] || die "bundle '$bundle' is for $(field arch), this machine is $march"
[[ "$mode" == cpu || "$(field preset)" != default ]] || die "bundle '$bundle' was made for the default preset only; the cuda preset needs --preset cuda or all"
[[ "$mode" == cuda || "$(field preset)" != cuda ]] || die "bundle '$bundle' was made for the cuda preset only (no OpenBLAS/oneDNN); the default preset needs --preset default or all"
ndeb=0
while read -r _ name version sum file; do
  [[ -f "$b/debs/$file" ]] || die "package $name $version ($file) is missing from the bundle"
  [[ "$(sha256sum "$b/debs/$file" | cut -d' ' -f1)" == "$sum" ]] || die "package $name $version ($file) is corrupt (checksum mismatch)"
  ndeb=$((ndeb + 1))
done < <(grep '^deb ' "$b/MANIFEST")
((ndeb > 0)) || die "bundle '$bundle' lists no packages"
[[ -f "$b/kokkos-src/CMakeLists.txt" ]] || die "bundle '$bundle' has no Kokkos source"
if [[ -n "$source" ]]; then
  [[ -f "$source/CMakePresets.json" ]] || die "--source '$source' is not a ScaleProof source tree"
  source=$(cd "$source" && pwd)
fi

# ---- what this machine has ---------------------------------------------------
say "bundle: commit $(field commit | cut -c1-12), $ndeb packages for $(field release)/$(field arch), preset $(field preset)"
say "found: cmake $(cmake --version | awk 'NR==1{print $3}'), ninja $(ninja --version), $(c++ --version 2>/dev/null | head -n1 || g++ --version | head -n1)"
arch="" cudaroot="" hints=()
if [[ "$mode" == cuda ]]; then
  cudaroot=$(cd "$(dirname "$nvcc")/.." && pwd)
  say "found: nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') at $nvcc"
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' .' || true)
  if [[ "$cap" =~ ^[0-9]+$ ]]; then
    arch=$cap
    say "found: GPU $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), compute capability ${cap:0:-1}.${cap: -1} (sm_$arch)"
  else
    arch=${SCALEPROOF_CUDA_ARCH:-90}
    say "skip: no GPU answered nvidia-smi; building for sm_$arch (SCALEPROOF_CUDA_ARCH), compile only"
  fi
  # cuBLAS, cuDNN and NCCL: the toolkit first, else Python's nvidia-* packages.
  pydirs=()
  for py in python3 python; do
    command -v "$py" >/dev/null || continue
    while IFS= read -r d; do [[ -n "$d" ]] && pydirs+=("$d"); done < <("$py" - 2>/dev/null <<'PY'
import importlib.util, os
spec = importlib.util.find_spec("nvidia")
for root in (spec.submodule_search_locations if spec else []):
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if os.path.isdir(os.path.join(d, "include")) or os.path.isdir(os.path.join(d, "lib")):
            print(d)
PY
)
    break
  done
  findlib() {  # findlib HEADER LIBGLOB -> prints the dir holding both, toolkit first
    local d
    for d in "$cudaroot" "$cudaroot/targets/x86_64-linux" "${pydirs[@]}"; do
      if [[ -f "$d/include/$1" ]] && compgen -G "$d/lib*/$2" >/dev/null; then echo "$d"; return 0; fi
    done
    return 1
  }
  for lib in cublas:cublas_v2.h:libcublas.so* cudnn:cudnn.h:libcudnn.so* nccl:nccl.h:libnccl.so*; do
    IFS=: read -r name header glob <<<"$lib"
    if d=$(findlib "$header" "$glob"); then
      say "found: $name in $d"
      [[ "$d" == "$cudaroot"* ]] || hints+=("$d")
    else
      case "$name" in
        cudnn) say "skip: cuDNN not found: the conv family runs without its cuDNN baseline" ;;
        *) die "$name not found in the CUDA toolkit ($cudaroot) nor in a Python environment's nvidia-* packages" ;;
      esac
    fi
  done
  preset=cuda variant=cuda
else
  say "skip: CUDA (no nvcc, or --cpu): building the default preset (Serial+OpenMP, OpenBLAS, oneDNN)"
  preset=default variant=openmp
fi
((tests)) || say "skip: unit and conformance tests (--no-tests)"
((check_only)) && { say "checked: the bundle and this machine are usable (--check-only: nothing written)"; exit 0; }

# ---- unpack the packages into the prefix --------------------------------------
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
R=$prefix/root
rm -rf "$R" "$prefix/bin"
mkdir -p "$R" "$prefix/bin"
while read -r _ name version sum file; do
  if command -v dpkg-deb >/dev/null; then
    dpkg-deb -x "$b/debs/$file" "$R"
  else
    (cd "$stage" && rm -f data.tar.* && ar x "$b/debs/$file" && tar -xf data.tar.* -C "$R")
  fi
done < <(grep '^deb ' "$b/MANIFEST")
say "unpacked $ndeb packages into $R"
[[ "$R" != *'#'* ]] || die "the prefix path must not contain '#'"
# Paths compiled into text files: MPICH's wrappers, pkg-config and CMake files.
lib=$R/usr/lib/$(ls "$R/usr/lib" | grep -m1 -- '-linux-gnu$' || echo x86_64-linux-gnu)
mapfile -t texts < <(find "$R/usr" -type f \( -name '*.pc' -o -name '*.cmake' -o -name 'mpi*.mpich' -o -name mpivars \) )
sed -i -E -e "s#(^|[^A-Za-z0-9_./-])/usr(/|\$|[\"' ])#\1$R/usr\2#g" -e "s#-([LI])/usr/#-\1$R/usr/#g" "${texts[@]}"
# The links Debian's alternatives would make, in PREFIX/bin.
for w in mpicc mpicxx mpifort; do [[ -x $R/usr/bin/$w.mpich ]] && ln -sf "$R/usr/bin/$w.mpich" "$prefix/bin/$w"; done
ln -sf "$R/usr/bin/mpiexec.hydra" "$prefix/bin/mpiexec"
ln -sf "$R/usr/bin/mpiexec.hydra" "$prefix/bin/mpirun"
# hydra starts its proxy from the folder of the name it was called by (argv[0],
# not the link's target), so the proxy must sit beside the links.
for h in hydra_pmi_proxy hydra_nameserver hydra_persist; do
  [[ -x $R/usr/bin/$h ]] && ln -sf "$R/usr/bin/$h" "$prefix/bin/$h"
done
libdirs=$lib
[[ -d $lib/openblas-pthread ]] && libdirs=$libdirs:$lib/openblas-pthread
for d in "${hints[@]}"; do libdirs=$libdirs:$(ls -d "$d"/lib* | head -n1); done
cat >"$prefix/env.sh" <<EOF
# Written by ci/offline-setup.sh: source it before running what it built.
export PATH="$prefix/bin:$R/usr/bin${cudaroot:+:$cudaroot/bin}:\$PATH"
export LD_LIBRARY_PATH="$libdirs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export UCX_MODULE_DIR="$lib/ucx"
export HYDRA_LAUNCHER=fork
EOF
# shellcheck source=/dev/null
. "$prefix/env.sh"
mpicxx -show >/dev/null && say "found: MPICH $(mpichversion 2>/dev/null | awk '/Version:/{print $3}') wrappers and hydra in $prefix/bin"

# ---- Kokkos ---------------------------------------------------------------
rm -rf "$prefix/kokkos-3.4.01-src"
cp -a "$b/kokkos-src" "$prefix/kokkos-3.4.01-src"
touch "$prefix/kokkos-3.4.01-src/.complete"
[[ "$mode" == cuda ]] && export PATH="$cudaroot/bin:$PATH"
SCALEPROOF_CACHE=$prefix SCALEPROOF_CUDA_ARCH=${arch:-90} "$here/kokkos.sh" "$variant"
kroot=$prefix/kokkos-3.4.01-$variant

# ---- the preset -------------------------------------------------------------
commit=()
if [[ -z "$source" ]]; then
  rm -rf "$prefix/source"
  cp -a "$b/source" "$prefix/source"
  source=$prefix/source
  commit=(-DSP_GIT_COMMIT="$(field commit)")
fi
builddir=${builddir:-$prefix/build/$preset}
cfg=(-DKokkos_ROOT="$kroot" -DMPI_CXX_COMPILER="$prefix/bin/mpicxx" -DMPIEXEC_EXECUTABLE="$prefix/bin/mpiexec"
     "-DCMAKE_PREFIX_PATH=$R/usr$(printf ';%s' "${hints[@]}")" -DSP_BUILD_TESTS=$( ((tests)) && echo ON || echo OFF)
     "${commit[@]}")
if [[ "$mode" == cuda ]]; then
  cfg+=(-DCMAKE_CXX_COMPILER="$kroot/bin/nvcc_wrapper" -DCUDAToolkit_ROOT="$cudaroot")
else
  cfg+=(-DCBLAS_INCLUDE_DIR="$R/usr/include/$(basename "$lib")/openblas-pthread"
        -DCMAKE_LIBRARY_PATH="$lib/openblas-pthread")
fi
say "configuring preset $preset: $source -> $builddir"
(cd "$source" && cmake --preset "$preset" -B "$builddir" "${cfg[@]}") >"$prefix/configure.log" 2>&1 ||
  { tail -n 30 "$prefix/configure.log" >&2; echo "offline-setup: configure failed (log: $prefix/configure.log)" >&2; exit 1; }
grep -E '^-- (Found|Could NOT)' "$prefix/configure.log" | sed 's/^-- /offline-setup: cmake: /' || true
targets=()
((tests)) || targets=(--target scaleproof)
say "building ($jobs jobs)"
cmake --build "$builddir" -j "$jobs" "${targets[@]}"
say "done: $builddir/harness/scaleproof (source $prefix/env.sh before running it)"
