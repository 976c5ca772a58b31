#pragma once
// The matrix product every layer runs on: the project's tiled GEMM
// (kernels/gemm/gemm_tiled.hpp) with either operand transposed, leading
// dimensions, batches, and 16-bit storage accumulated in fp32. Pointers are
// to row-major matrices in the default memory space.
//
// Accuracy (Higham, Accuracy and Stability, eq. 3.5): every element is a sum
// of K products in some order, so |fl(C) - C| <= gamma_K (|A||B|)_ij with u
// of the accumulation type; a C stored narrower than the accumulator adds
// one rounding, u_C |C_ij|. With accumulate, C_old is one more term (K + 1).
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include "kernels/gemm/gemm_tiled.hpp"
#include "kernels/precision/float16.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::nn {

enum class Op { N, T };  // the operand as stored, or its transpose

// Whether the default memory space is the host's: there the layers' element
// loops run in blocks whose inner loop the compiler vectorises; on a device,
// one element per thread.
inline constexpr bool kHostMemory =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;

// The accumulation type of a storage type: itself for fp32 and fp64, fp32 for 16-bit storage.
template <class S>
struct AccOf {
  using type = S;
};
template <>
struct AccOf<precision::fp16_t> {
  using type = float;
};
template <>
struct AccOf<precision::bf16_t> {
  using type = float;
};

// An accumulator value rounded once into storage type S.
template <class S, class Acc>
KOKKOS_INLINE_FUNCTION auto store_as(Acc x, int) -> decltype(S::from_float(float(x))) {
  return S::from_float(static_cast<float>(x));
}
template <class S, class Acc>
KOKKOS_INLINE_FUNCTION S store_as(Acc x, long) {
  return static_cast<S>(x);
}
// A stored value widened into the accumulation type.
template <class S>
KOKKOS_INLINE_FUNCTION typename AccOf<S>::type load(const S& x) {
  return kernels::gemm_widen<typename AccOf<S>::type>(x, 0);
}

// op(X) for X stored row-major with leading dimension ld.
template <class S>
kernels::GemmOperand<const S> operand(const S* p, int64_t ld, Op op) {
  return op == Op::N ? kernels::GemmOperand<const S>{p, ld, 1} : kernels::GemmOperand<const S>{p, 1, ld};
}

// Copies an M x N matrix between storage types, widening or rounding once
// (leading dimensions lds and ldd).
template <class From, class To>
SP_UNIT_LOCAL void convert(int M, int N, const From* src, int64_t lds, To* dst, int64_t ldd) {
  if constexpr (kHostMemory) {  // a row per iteration: no index division, an inner loop that vectorises
    Kokkos::parallel_for(
        "nn_convert", Kokkos::RangePolicy<>(0, M), KOKKOS_LAMBDA(const int i) {
          const From* s = src + i * lds;
          To* d = dst + i * ldd;
#pragma omp simd
          for (int j = 0; j < N; ++j) d[j] = store_as<To>(kernels::gemm_widen<float>(s[j], 0), 0);
        });
  } else {
    Kokkos::parallel_for(
        "nn_convert", Kokkos::RangePolicy<>(0, int64_t(M) * N), KOKKOS_LAMBDA(const int64_t idx) {
          const int64_t i = idx / N, j = idx % N;
          dst[i * ldd + j] = store_as<To>(kernels::gemm_widen<float>(src[i * lds + j], 0), 0);
        });
  }
}

// C (M x N, leading dimension ldc) = op(A) op(B), or += when accumulating;
// op(A) is M x K, op(B) K x N. Accumulates in AccOf<SC> (fp32 for 16-bit C);
// a 16-bit C is formed in fp32 and rounded once.
template <class SA, class SB, class SC>
void gemm(Op ta, Op tb, int M, int N, int K, const SA* A, int64_t lda, const SB* B, int64_t ldb, SC* C, int64_t ldc,
          bool accumulate = false) {
  using Acc = typename AccOf<SC>::type;
  if constexpr (std::is_same<SC, Acc>::value) {
    kernels::gemm_tiled_batched<Acc, SA, SB>(1, M, N, K, operand(A, lda, ta), operand(B, ldb, tb), {C, ldc, 1},
                                             accumulate);
  } else {
    static_assert(std::is_same<Acc, float>::value, "16-bit storage accumulates in fp32");
    Kokkos::View<Acc*> acc(Kokkos::view_alloc(std::string("nn_gemm_acc"), Kokkos::WithoutInitializing),
                           static_cast<size_t>(M) * N);
    if (accumulate) convert(M, N, C, ldc, acc.data(), N);
    kernels::gemm_tiled_batched<Acc, SA, SB>(1, M, N, K, operand(A, lda, ta), operand(B, ldb, tb), {acc.data(), N, 1},
                                             accumulate);
    convert(M, N, acc.data(), int64_t(N), C, ldc);
  }
}

// One operand of a batched product: matrix b of the batch starts at
// p + (b / nh) * bs + (b % nh) * bh (nh = 1: plain stride bs), stored
// row-major with leading dimension ld, used as op.
template <class S>
struct Batched {
  S* p;
  int64_t ld;
  Op op;
  int64_t bs, bh = 0;
  int nh = 1;
};

// For b < batch: C_b = op(A_b) op(B_b) (M x N, K deep), accumulated in T.
template <class T>
void gemm_batched(int batch, int M, int N, int K, Batched<const T> A, Batched<const T> B, Batched<T> C) {
  auto as = operand(A.p, A.ld, A.op), bs = operand(B.p, B.ld, B.op);
  as.bs = A.bs, as.bh = A.bh, as.nh = A.nh;
  bs.bs = B.bs, bs.bh = B.bh, bs.nh = B.nh;
  kernels::GemmOperand<T> cs{C.p, C.ld, 1, C.bs, C.bh, C.nh};
  kernels::gemm_tiled_batched<T, T, T>(batch, M, N, K, as, bs, cs);
}

}  // namespace sp::nn
