#pragma once
// A buffer among the operand copies that step_gemm and step_attention cycle
// through, for an output every pass writes whole. It is allocated without
// Kokkos's value-initialisation (for 16-bit types an element-by-element pass
// over every copy) but set to zero bytes here, which is zero in every storage
// type: host pages are then touched in setup, and no timed call pays their
// first-touch faults.
#include <Kokkos_Core.hpp>
#include <cstring>
#include <string>

namespace sp::hybrid {

template <class S>
Kokkos::View<S*> touched_buffer(const char* name, size_t count) {
  using View = Kokkos::View<S*>;
  View v(Kokkos::view_alloc(std::string(name), Kokkos::WithoutInitializing), count);
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible) {
    if (count > 0) std::memset(static_cast<void*>(v.data()), 0, count * sizeof(S));
  } else {
    Kokkos::deep_copy(v, S());
  }
  return v;
}

}  // namespace sp::hybrid
