#pragma once
// Low-precision GEMM with wide accumulation: C = A * B where A and B are
// stored in a narrow type S (fp32, fp16, bf16 or int8) and every product is
// accumulated in the type of C (fp32 for floating storage, int32 for int8),
// as tensor cores and int8 dot-product instructions do (Micikevicius et al.
// 2018; Jacob et al. 2018 for int8 -> int32).
//
// One team per row block; each row of C is accumulated in place while the
// rows of B stream past it, so the innermost loop is contiguous in B and C
// (it vectorises, conversion included) and a KC-deep panel of B is reused by
// every row of the block from cache.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "kernels/precision/float16.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::kernels {

// Widening conversion of one stored element into the accumulator type.
template <class Acc>
struct Widen;
template <>
struct Widen<float> {
  template <class S>
  KOKKOS_INLINE_FUNCTION static float of(S x) {
    return sp::precision::to_f32(x);
  }
};
template <>
struct Widen<int32_t> {
  KOKKOS_INLINE_FUNCTION static int32_t of(int8_t x) { return x; }
};

// a * b widened into Acc. int8 x int8 fits int16 exactly (|p| <= 2^14), and
// the 16-bit multiply is the form compilers vectorise (pmullw + widening
// adds); a 32-bit multiply of sign-extended bytes was 20x slower here.
template <class Acc>
struct MulAcc {
  template <class S>
  KOKKOS_INLINE_FUNCTION static Acc of(Acc a, S b) {
    return a * Widen<Acc>::of(b);
  }
};
template <>
struct MulAcc<int32_t> {
  KOKKOS_INLINE_FUNCTION static int32_t of(int32_t a, int8_t b) {
    return static_cast<int16_t>(static_cast<int16_t>(a) * static_cast<int16_t>(b));
  }
};

template <class S, class Acc>
SP_UNIT_LOCAL void gemm_lowp(Kokkos::View<const S**, Kokkos::LayoutRight> A,
                             Kokkos::View<const S**, Kokkos::LayoutRight> B,
                             Kokkos::View<Acc**, Kokkos::LayoutRight> C) {
  constexpr int MB = 8, KC = 128;  // rows per work item, K panel depth
  const int M_ = static_cast<int>(C.extent(0)), N_ = static_cast<int>(C.extent(1)), K_ = static_cast<int>(A.extent(1));
  const int blocks = (M_ + MB - 1) / MB;
  Kokkos::parallel_for(
      "gemm_lowp", Kokkos::RangePolicy<>(0, blocks), KOKKOS_LAMBDA(const int b) {
        // Extents copied to locals: int32 stores into C could otherwise alias
        // the closure's int members, so the trip count would be reloaded every
        // iteration and the int8 loop would not vectorise.
        const int M = M_, N = N_, K = K_;
        const int i0 = b * MB, i1 = i0 + MB < M ? i0 + MB : M;
        for (int i = i0; i < i1; ++i)
          for (int j = 0; j < N; ++j) C(i, j) = Acc(0);
        for (int k0 = 0; k0 < K; k0 += KC) {
          const int k1 = k0 + KC < K ? k0 + KC : K;
          for (int i = i0; i < i1; ++i) {
            Acc* __restrict__ c = &C(i, 0);  // rows of C and B never overlap
            for (int k = k0; k < k1; ++k) {
              const Acc a = Widen<Acc>::of(A(i, k));
              const S* __restrict__ brow = &B(k, 0);
              for (int j = 0; j < N; ++j) c[j] += MulAcc<Acc>::of(a, brow[j]);
            }
          }
        }
      });
}

}  // namespace sp::kernels
