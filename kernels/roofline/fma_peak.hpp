#pragma once
// Peak FLOP/s probe (as the Empirical Roofline Toolkit does): each work item
// runs `iters` steps of x = x*a + b on LANES independent values. The lanes are
// a fixed-size inner loop the compiler vectorizes, and there are enough of
// them to cover the FMA latency x throughput of a core (10 vectors of
// 256 bits here); on a GPU each thread simply has LANES independent chains.
#include <Kokkos_Core.hpp>
#include "scaleproof/kokkos_compat.hpp"

namespace sp::kernels {

template <class T>
struct FmaLanes {
  static constexpr int value = 10 * 32 / static_cast<int>(sizeof(T));  // 80 fp32 or 40 fp64
};

// out(w) = sum of the lanes of item w after iters steps from x0(w, lane).
template <class T>
SP_UNIT_LOCAL void fma_chain(Kokkos::View<T*> out, int64_t items, int64_t iters, T a, T b) {
  constexpr int L = FmaLanes<T>::value;
  Kokkos::parallel_for(
      "fma_chain", Kokkos::RangePolicy<>(0, items), KOKKOS_LAMBDA(const int64_t w) {
        T x[L];
        for (int l = 0; l < L; ++l) x[l] = T(0.5) + T(0.001) * T((w + l) % 64);
        for (int64_t k = 0; k < iters; ++k)
          for (int l = 0; l < L; ++l) x[l] = x[l] * a + b;
        T s = 0;
        for (int l = 0; l < L; ++l) s += x[l];
        out(w) = s;
      });
}

}  // namespace sp::kernels
