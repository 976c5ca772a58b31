#pragma once
// Test helpers: a host vector copied into a device View and back, so a test
// compares what a kernel wrote on the default execution space with host
// values whatever the back end.
#include <Kokkos_Core.hpp>
#include <vector>

namespace sp::test {

template <class T>
Kokkos::View<T*> dev(const std::vector<T>& h) {
  Kokkos::View<T*> d("test_in", h.size());
  Kokkos::deep_copy(d, Kokkos::View<const T*, Kokkos::HostSpace>(h.data(), h.size()));
  return d;
}

template <class T>
std::vector<T> back(const Kokkos::View<T*>& d) {
  std::vector<T> h(d.extent(0));
  Kokkos::deep_copy(Kokkos::View<T*, Kokkos::HostSpace>(h.data(), h.size()), d);
  return h;
}

}  // namespace sp::test
