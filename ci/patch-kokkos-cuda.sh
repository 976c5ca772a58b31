#!/usr/bin/env bash
# Makes an extracted copy of Kokkos 3.4.01 build its CUDA back end with
# nvcc 13 (CUDA 13.0), and lets its sm_80 code start on Hopper GPUs.
#
#   ci/patch-kokkos-cuda.sh <kokkos-source-copy-dir> <sm-arch-number, e.g. 90>
#
# Called by ci/kokkos.sh on a private copy of the source; never run it on
# anything checked in. Every edit either finds the shipped text and rewrites
# it, finds its own already-patched text and leaves it alone (so running the
# script twice is harmless), or stops with a message and a non-zero exit.
# See ../../shared/KOKKOS.md ("Building Kokkos 3.4.01") for the background.
set -euo pipefail

usage() { echo "usage: $0 <kokkos-source-copy-dir> <sm-arch-number, e.g. 90>" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
src=$1
arch=$2
[[ "$arch" =~ ^[0-9]{2,3}$ ]] || { echo "patch-kokkos-cuda: arch must be a number like 80 or 90, got '$arch'" >&2; exit 2; }
[[ -f "$src/CMakeLists.txt" && -d "$src/core/src/Cuda" ]] ||
  { echo "patch-kokkos-cuda: '$src' does not look like a Kokkos source tree" >&2; exit 1; }
grep -q "set(Kokkos_VERSION_MAJOR 3)" "$src/CMakeLists.txt" && grep -q "set(Kokkos_VERSION_MINOR 4)" "$src/CMakeLists.txt" ||
  { echo "patch-kokkos-cuda: '$src' is not Kokkos 3.4; these edits are written for 3.4.01" >&2; exit 1; }
# A checked-in tree must never be edited: refuse anything git tracks.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
   [[ -n "$(git -C "$src" ls-files -- CMakeLists.txt 2>/dev/null)" ]]; then
  echo "patch-kokkos-cuda: '$src' is tracked by git; patch a copy instead" >&2; exit 1
fi

# The edits are done by Python: exact-text replacements with explicit
# "already applied" detection are easier to make fail-loud there than in sed.
# Each edit(...) gets: the file, a label, the shipped text (or a regex), the
# replacement, and a marker that is present only once the edit is applied.
python3 - "$src" "$arch" <<'PY'
import re, sys, pathlib

src, arch = pathlib.Path(sys.argv[1]), sys.argv[2]
MARK = "scaleproof-patch"   # tag in every inserted comment
changed = []
pending = {}   # path -> new text; written only after every edit has succeeded,
               # so a failing edit leaves the tree untouched

def read(path):
    return pending.get(path) if path in pending else path.read_text()

def fail(msg):
    sys.exit(f"patch-kokkos-cuda: {msg}")

def edit(rel, label, old, new, applied, regex=False, count=1):
    """Replace `old` (exactly `count` occurrences) by `new` in src/rel.
    `applied(text)` says whether the edit is already in place."""
    path = src / rel
    if not path.is_file():
        fail(f"{label}: {rel} not found")
    text = read(path)
    if applied(text):
        print(f"patch-kokkos-cuda: {label}: already applied")
        return
    n = len(re.findall(old, text)) if regex else text.count(old)
    if n != count:
        fail(f"{label}: expected {count} occurrence(s) of the shipped text in {rel}, "
             f"found {n}; the source differs from Kokkos 3.4.01, update this script")
    text = re.sub(old, new, text) if regex else text.replace(old, new)
    if not applied(text):
        fail(f"{label}: edit did not take effect in {rel}")
    pending[path] = text
    changed.append(label)
    print(f"patch-kokkos-cuda: {label}: patching {rel}")

def set_line(rel, label, pattern, line, what):
    """Make the one line of src/rel matching `pattern` (a line regex that also
    matches its own earlier rewrites) read `line`; `what` is printed."""
    path = src / rel
    if not path.is_file():
        fail(f"{label}: {rel} not found")
    text = read(path)
    pat = re.compile(pattern, re.M)
    if len(pat.findall(text)) != 1:
        fail(f"{label}: expected exactly one line matching {pattern} in {rel}")
    if pat.search(text).group(0) == line:
        print(f"patch-kokkos-cuda: {label}: already applied")
        return
    pending[path] = pat.sub(lambda m: line, text)
    changed.append(label)
    print(f"patch-kokkos-cuda: {label}: {what}")

# ---------------------------------------------------------------------------
# 1. bin/nvcc_wrapper: default arch sm_35 -> sm_<arch>.
# nvcc 13 rejects sm_35 (support below sm_75 was dropped), and CMake's
# compiler check runs the wrapper with no -arch flag at all, so configuring
# fails before Kokkos adds its own -arch. Re-running with another arch
# rewrites the line again (the marker records the last one).
set_line("bin/nvcc_wrapper", "nvcc_wrapper default arch",
         r'^default_arch="sm_[0-9]+"(?:  # ' + MARK + r':.*)?$',
         f'default_arch="sm_{arch}"  # {MARK}: was sm_35, which nvcc 13 rejects; '
         'CMake probes the compiler without -arch',
         f"setting sm_{arch}")

# ---------------------------------------------------------------------------
# 2. Kokkos_CudaSpace.cpp: cudaMemPrefetchAsync.
# CUDA 13 removed the (ptr, bytes, int device, stream) overload; it takes a
# cudaMemLocation plus a flags word instead. Keep the old call for CUDA < 13.
old = """    CUDA_SAFE_CALL(cudaMemPrefetchAsync(ptr, bytes, space.cuda_device(),
                                        space.cuda_stream()));
"""
new = f"""    // {MARK}: CUDA 13 removed the 4-argument cudaMemPrefetchAsync(ptr,
    // bytes, device, stream); it takes a cudaMemLocation and flags instead.
#if defined(CUDART_VERSION) && (CUDART_VERSION >= 13000)
    cudaMemLocation location = {{}};
    location.type            = cudaMemLocationTypeDevice;
    location.id              = space.cuda_device();
    CUDA_SAFE_CALL(cudaMemPrefetchAsync(ptr, bytes, location, 0u,
                                        space.cuda_stream()));
#else
{old}#endif
"""
edit("core/src/Cuda/Kokkos_CudaSpace.cpp", "cudaMemPrefetchAsync", old, new,
     lambda s: f"{MARK}: CUDA 13 removed the 4-argument cudaMemPrefetchAsync" in s)

# ---------------------------------------------------------------------------
# 3. Kokkos_Cuda_Half.hpp: cast_from_half<T> in the CUDA >= 11.1 branch.
# Those templates hand a half_t to the __half2* intrinsics, relying on an
# implicit half_t -> __half conversion that CUDA 13's cuda_fp16.h no longer
# finds (half_t's conversion operator is explicit); and __half2double does
# not exist in CUDA 13. Convert explicitly to half_t::impl_type (= __half),
# and go through float for double (exact: every half is a float).
half = "core/src/Cuda/Kokkos_Cuda_Half.hpp"
intrinsics = r"__half2(?:float|short_rz|ushort_rz|int_rz|uint_rz|ll_rz|ull_rz)"
edit(half, "half_t intrinsic arguments",
     r"return (" + intrinsics + r")\(val\);",
     r"return \1(half_t::impl_type(val));  // " + MARK + ": explicit __half for CUDA 13",
     lambda s: not re.search(r"return " + intrinsics + r"\(val\);", s)
               and f"(half_t::impl_type(val));  // {MARK}" in s,
     regex=True, count=7)
edit(half, "half_t to double",
     "  return __half2double(val);\n",
     f"  // {MARK}: CUDA 13 has no __half2double; half -> float is exact.\n"
     "  return static_cast<T>(__half2float(half_t::impl_type(val)));\n",
     lambda s: "__half2double(val)" not in s and f"{MARK}: CUDA 13 has no __half2double" in s)

# ---------------------------------------------------------------------------
# 4. Kokkos_Cuda_Instance.cpp: the compute-capability check at initialize.
# Kokkos 3.4 knows no Hopper arch (AMPERE80 is its newest), and aborts when
# the kernels' major compute capability differs from the device's. sm_80 PTX
# JIT-compiled on an H100/H200 (9.0) reports 8.0 and would abort, although
# CUDA runs it fine. Abort only when the code is newer than the device.
edit("core/src/Cuda/Kokkos_Cuda_Instance.cpp", "compute capability check",
     "    if (compiled_major != cudaProp.major || compiled_minor > cudaProp.minor) {\n",
     f"    // {MARK}: abort only if the kernels were compiled for a newer compute\n"
     "    // capability than the device's; older code (e.g. sm_80 on 9.0) runs.\n"
     "    if (compiled_major > cudaProp.major ||\n"
     "        (compiled_major == cudaProp.major && compiled_minor > cudaProp.minor)) {\n",
     lambda s: f"{MARK}: abort only if the kernels were compiled for a newer" in s)

# ---------------------------------------------------------------------------
# 5. cmake/kokkos_arch.cmake: the code the AMPERE80 option emits.
# Kokkos 3.4 has no Hopper option. For a target of 9.0 or newer the AMPERE80
# option is made to emit that target's machine code (sm_90 for 90) instead of
# sm_80 with PTX: the driver would JIT-compile every kernel of the program at
# its first start, minutes for a program of this size. Hopper runs everything
# Kokkos 3.4 generates for Ampere. Below 90 the option keeps sm_80.
target = arch if int(arch) >= 90 else "80"
set_line("cmake/kokkos_arch.cmake", "AMPERE80 code target",
         r'^CHECK_CUDA_ARCH\(AMPERE80  sm_[0-9]+\)(?:  # ' + MARK + r':.*)?$',
         f"CHECK_CUDA_ARCH(AMPERE80  sm_{target})" +
         (f"  # {MARK}: Hopper or newer code from the AMPERE80 option" if target != "80" else ""),
         f"sm_{target}")

for path, text in pending.items():
    path.write_text(text)   # write_text keeps the file's mode (nvcc_wrapper stays executable)
print("patch-kokkos-cuda: done (" + (", ".join(changed) if changed else "nothing to change") + ")")
PY
