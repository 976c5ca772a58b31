#pragma once
// The two ways of applying SGD updates that fp16_underflow compares
// (Micikevicius et al. 2018, 3.1): weights kept in fp16 and updated in fp16
// arithmetic (each operation evaluated in fp32 and rounded to fp16, as CPU
// frameworks emulate fp16), or fp32 master weights accumulating the updates
// and rounded to fp16 only as the working copy.
#include <Kokkos_Core.hpp>

#include "kernels/precision/float16.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::precision {

// w16 <- fp16(w16 - u16), `steps` times.
SP_UNIT_LOCAL inline void sgd_pure_fp16(Kokkos::View<fp16_t*> w16, Kokkos::View<const fp16_t*> u16, int64_t steps) {
  for (int64_t s = 0; s < steps; ++s)
    Kokkos::parallel_for(
        "sgd_fp16", w16.extent(0),
        KOKKOS_LAMBDA(const int64_t i) { w16(i) = fp16_t::from_float(w16(i).to_float() - u16(i).to_float()); });
}

// master <- master - u, `steps` times, then w16 <- fp16(master).
SP_UNIT_LOCAL inline void sgd_master_fp32(Kokkos::View<float*> master, Kokkos::View<const float*> u,
                                          Kokkos::View<fp16_t*> w16, int64_t steps) {
  for (int64_t s = 0; s < steps; ++s)
    Kokkos::parallel_for(
        "sgd_master", master.extent(0), KOKKOS_LAMBDA(const int64_t i) { master(i) -= u(i); });
  Kokkos::parallel_for(
      "cast_fp16", master.extent(0), KOKKOS_LAMBDA(const int64_t i) { w16(i) = fp16_t::from_float(master(i)); });
}

}  // namespace sp::precision
