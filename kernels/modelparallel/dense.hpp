#pragma once
// Dense building blocks of the model-parallel layers (fp64, row-major Kokkos
// Views in the default memory space): matrix products with either operand
// transposed, the tanh GeLU and its derivative, element-wise sums. One source
// for every back end; communication is done by the caller on host copies.
#include <Kokkos_Core.hpp>

#include "kernels/gemm/gemm_tiled.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::mp {

using Mat = Kokkos::View<double**, Kokkos::LayoutRight>;
using CMat = Kokkos::View<const double**, Kokkos::LayoutRight>;

// A^T, materialised (O(n^2), so that every product runs through the tiled GEMM).
inline Mat transpose(CMat A) {
  const int R = static_cast<int>(A.extent(0)), C = static_cast<int>(A.extent(1));
  Mat T(Kokkos::view_alloc(std::string("mp_transpose"), Kokkos::WithoutInitializing), C, R);
  Kokkos::parallel_for(
      "mp_transpose", Kokkos::RangePolicy<>(0, R * C), KOKKOS_LAMBDA(const int idx) {
        T(idx % C, idx / C) = A(idx / C, idx % C);
      });
  return T;
}

// C = op(A) op(B), or C += op(A) op(B) when accumulating; op = transpose
// when the flag is set. Each element of the product is one dot product from
// the project's tiled GEMM (kernels/gemm), added to C afterwards: the
// accumulation of weight gradients over micro-batches stays a single sum.
inline void matmul(CMat A, bool ta, CMat B, bool tb, Mat C, bool accumulate = false) {
  const CMat a = ta ? CMat(transpose(A)) : A, b = tb ? CMat(transpose(B)) : B;
  if (!accumulate) {
    sp::kernels::gemm_tiled<double>(a, b, C);
    return;
  }
  Mat P(Kokkos::view_alloc(std::string("mp_product"), Kokkos::WithoutInitializing), C.extent(0), C.extent(1));
  sp::kernels::gemm_tiled<double>(a, b, P);
  const int N = static_cast<int>(C.extent(1));
  Kokkos::parallel_for(
      "mp_accumulate", Kokkos::RangePolicy<>(0, C.extent(0) * N),
      KOKKOS_LAMBDA(const int idx) { C(idx / N, idx % N) += P(idx / N, idx % N); });
}

// GeLU, tanh form as in Megatron-LM's fused bias_gelu:
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
KOKKOS_INLINE_FUNCTION double gelu(double x) {
  const double c = 0.7978845608028654, a = 0.044715;
  return 0.5 * x * (1.0 + sp::kx::tanh(c * (x + a * x * x * x)));
}
KOKKOS_INLINE_FUNCTION double gelu_grad(double x) {
  const double c = 0.7978845608028654, a = 0.044715;
  const double t = sp::kx::tanh(c * (x + a * x * x * x));
  return 0.5 * (1.0 + t) + (0.5 * x * c * (1.0 + 3.0 * a * x * x)) * (1.0 - t * t);
}

inline void gelu_forward(CMat Z, Mat H) {
  const int N = static_cast<int>(Z.extent(1));
  Kokkos::parallel_for(
      "mp_gelu", Kokkos::RangePolicy<>(0, Z.extent(0) * N),
      KOKKOS_LAMBDA(const int idx) { H(idx / N, idx % N) = gelu(Z(idx / N, idx % N)); });
}

// dZ = dH * GeLU'(Z)
inline void gelu_backward(CMat Z, CMat dH, Mat dZ) {
  const int N = static_cast<int>(Z.extent(1));
  Kokkos::parallel_for(
      "mp_gelu_grad", Kokkos::RangePolicy<>(0, Z.extent(0) * N), KOKKOS_LAMBDA(const int idx) {
        const int i = idx / N, j = idx % N;
        dZ(i, j) = dH(i, j) * gelu_grad(Z(i, j));
      });
}

// Y = A + B (residual connections).
inline void add(CMat A, CMat B, Mat Y) {
  const int N = static_cast<int>(A.extent(1));
  Kokkos::parallel_for(
      "mp_add", Kokkos::RangePolicy<>(0, A.extent(0) * N),
      KOKKOS_LAMBDA(const int idx) { Y(idx / N, idx % N) = A(idx / N, idx % N) + B(idx / N, idx % N); });
}

// Columns [c0, c0 + n) of a matrix (the slice a tensor-parallel rank owns);
// rows [r0, r0 + n) likewise. Copies, so the slice is contiguous.
inline Mat column_slice(CMat A, int c0, int n) {
  Mat out("slice", A.extent(0), n);
  Kokkos::deep_copy(out, Kokkos::subview(A, Kokkos::ALL, Kokkos::make_pair(c0, c0 + n)));
  return out;
}
inline Mat row_slice(CMat A, int r0, int n) {
  Mat out("slice", n, A.extent(1));
  Kokkos::deep_copy(out, Kokkos::subview(A, Kokkos::make_pair(r0, r0 + n), Kokkos::ALL));
  return out;
}

}  // namespace sp::mp
