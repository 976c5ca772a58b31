#pragma once
// Small strided GEMM for the training loops (MLP, block stack): C = op(A)
// op(B), any transposition expressed through strides, products accumulated
// in fp32, the result rounded once into C's storage type, with an optional
// fused epilogue (ReLU, or zeroing where a mask is not positive: the ReLU
// derivative). One fp32 accumulator per output, summed over k in order.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "kernels/precision/float16.hpp"

namespace sp::kernels {

enum class Epilogue { none, relu, mask };

// Element (r, c) of a row-major matrix viewed with explicit strides.
struct Strided {
  int64_t rs, cs;  // row and column strides in elements
  static Strided rows(int64_t ld) { return {ld, 1}; }     // as stored
  static Strided transposed(int64_t ld) { return {1, ld}; }  // its transpose
};

template <class SA, class SB, class SC, class SM = SC>
void matmul_strided(int M, int N, int K, const SA* A, Strided sa, const SB* B, Strided sb, SC* C,
                    Epilogue ep = Epilogue::none, const SM* mask = nullptr) {
  using sp::precision::to_f32;
  Kokkos::parallel_for(
      "matmul_strided", Kokkos::RangePolicy<>(0, int64_t(M) * N), KOKKOS_LAMBDA(const int64_t idx) {
        const int64_t i = idx / N, j = idx % N;
        float acc = 0;
        for (int k = 0; k < K; ++k) acc += to_f32(A[i * sa.rs + k * sa.cs]) * to_f32(B[k * sb.rs + j * sb.cs]);
        if (ep == Epilogue::relu && acc < 0) acc = 0;  // NaN passes through
        if (ep == Epilogue::mask && !(to_f32(mask[idx]) > 0)) acc = 0;
        C[idx] = sp::precision::from_f32<SC>(acc);
      });
}

}  // namespace sp::kernels
