#pragma once
// Peak FLOP/s probe (as the Empirical Roofline Toolkit does): each work item
// runs `iters` steps of x = x*a + b on LANES independent values, enough of
// them to cover the FMA latency x throughput of a core: 10 vectors of the
// widest registers the host build has (2 FMA pipes x 4-5 cycles of latency).
// On a host-only build the lanes are written as whole vectors of that width
// (the compilers' generic vector types, as the GEMM micro-kernel): left to the
// loop vectorizer, GCC tuned for AVX-512 Xeons uses 256-bit registers, half
// of what the core's FMA units take per instruction, and the "peak" would be
// half the peak. On a GPU each thread simply has LANES independent chains.
#include <Kokkos_Core.hpp>

#include "kernels/gemm/gemm_tiled.hpp"  // SP_GEMM_HOST_VECTORS, GemmTiles::VEC, SP_UNROLL
#include "scaleproof/kokkos_compat.hpp"

namespace sp::kernels {

template <class T>
struct FmaLanes {
#ifdef SP_GEMM_HOST_VECTORS
  static constexpr int vector_bytes = GemmTiles<T, Kokkos::DefaultHostExecutionSpace>::VEC;  // 64 with AVX-512
#else
  static constexpr int vector_bytes = 32;
#endif
  static constexpr int vectors = 10;
  static constexpr int value = vectors * vector_bytes / static_cast<int>(sizeof(T));
};

namespace detail {

// Lane l of an item starts at 0.5 + 0.001 ((w + l) mod 64).
template <class T>
KOKKOS_INLINE_FUNCTION T fma_start(int64_t w, int l) {
  return T(0.5) + T(0.001) * T((w + l) % 64);
}

#ifdef SP_GEMM_HOST_VECTORS
// The lanes of one item as `vectors` whole registers; the same operations per
// lane as the plain loop, and the lanes summed in the same order.
template <class T>
__attribute__((noinline)) T fma_item_vectors(int64_t w, int64_t iters, T a, T b) {
  constexpr int VB = FmaLanes<T>::vector_bytes, W = VB / static_cast<int>(sizeof(T)), NV = FmaLanes<T>::vectors;
  typedef T V __attribute__((vector_size(VB)));
  V x[NV];
  for (int v = 0; v < NV; ++v)
    for (int j = 0; j < W; ++j) x[v][j] = fma_start<T>(w, v * W + j);
  const V av = V{} + a, bv = V{} + b;
  for (int64_t k = 0; k < iters; ++k) SP_UNROLL for (int v = 0; v < NV; ++v) x[v] = x[v] * av + bv;
  T s = 0;
  for (int v = 0; v < NV; ++v)
    for (int j = 0; j < W; ++j) s += x[v][j];
  return s;
}
#endif

}  // namespace detail

// out(w) = sum of the lanes of item w after iters steps from x0(w, lane).
template <class T>
SP_UNIT_LOCAL void fma_chain(Kokkos::View<T*> out, int64_t items, int64_t iters, T a, T b) {
  Kokkos::parallel_for(
      "fma_chain", Kokkos::RangePolicy<>(0, items), KOKKOS_LAMBDA(const int64_t w) {
#ifdef SP_GEMM_HOST_VECTORS
        out(w) = detail::fma_item_vectors<T>(w, iters, a, b);
#else
        constexpr int L = FmaLanes<T>::value;
        T x[L];
        for (int l = 0; l < L; ++l) x[l] = detail::fma_start<T>(w, l);
        for (int64_t k = 0; k < iters; ++k)
          for (int l = 0; l < L; ++l) x[l] = x[l] * a + b;
        T s = 0;
        for (int l = 0; l < L; ++l) s += x[l];
        out(w) = s;
#endif
      });
}

}  // namespace sp::kernels
