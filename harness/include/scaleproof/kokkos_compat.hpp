#pragma once
// The few Kokkos spellings that differ between 3.4 (what ci/kokkos.sh builds)
// and 4.x/5.x (what a user may bring with -DKokkos_ROOT). Keyed on KOKKOS_VERSION.
#include <Kokkos_Core.hpp>

// Marks a function that a header defines and whose body holds a
// KOKKOS_LAMBDA. Under nvcc it gets internal linkage, one copy per
// translation unit: nvcc's host-side wrapper of an extended lambda copies the
// closure through function pointers that live in an unnamed namespace, one
// set per unit, filled in when the closure is created. When the linker keeps
// one unit's copy of a kernel launch that several units instantiated, the
// launch reads the pointers of a unit that may never have created the
// closure (null: the program jumps to address 0). With internal linkage the
// closure's creation and its launch stay in one unit.
#if defined(__NVCC__)
#define SP_UNIT_LOCAL static
#else
#define SP_UNIT_LOCAL
#endif

namespace sp::kx {

#if KOKKOS_VERSION >= 40000
using Kokkos::fabs;
using Kokkos::sqrt;
using Kokkos::exp;
using Kokkos::tanh;
template <class V>
using HostMirror = typename V::host_mirror_type;
#else
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::sqrt;
using Kokkos::Experimental::exp;
using Kokkos::Experimental::tanh;
template <class V>
using HostMirror = typename V::HostMirror;
#endif

template <class T>
KOKKOS_INLINE_FUNCTION T min(T a, T b) {
  return a < b ? a : b;
}
template <class T>
KOKKOS_INLINE_FUNCTION T max(T a, T b) {
  return a < b ? b : a;
}

// Host threads per rank: what manifests, counters and the oversubscription
// check count against cores (a GPU's thread count is not threads per rank).
inline int concurrency() { return Kokkos::DefaultHostExecutionSpace().concurrency(); }

// The most threads one process may ask of the host back end: Kokkos's
// OpenMP back end keeps a fixed pool of per-thread data (512 entries in
// 3.x and 4.x); asking for more corrupts memory.
int max_host_threads();

// "Kokkos 3.4.1 OpenMP" etc., for manifests.
std::string version_string();
std::string backends_string();

}  // namespace sp::kx
