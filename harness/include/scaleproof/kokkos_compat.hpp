#pragma once
// The few Kokkos spellings that differ between 3.4 (what ci/kokkos.sh builds)
// and 4.x/5.x (what a user may bring with -DKokkos_ROOT). Keyed on KOKKOS_VERSION.
#include <Kokkos_Core.hpp>

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

inline int concurrency() { return Kokkos::DefaultExecutionSpace().concurrency(); }

// The most threads one process may ask of the host back end: Kokkos's
// OpenMP back end keeps a fixed pool of per-thread data (512 entries in
// 3.x and 4.x); asking for more corrupts memory.
int max_host_threads();

// "Kokkos 3.4.1 OpenMP" etc., for manifests.
std::string version_string();
std::string backends_string();

}  // namespace sp::kx
