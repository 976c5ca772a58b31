#pragma once
// Dense building blocks of the model-parallel layers (fp64, row-major Kokkos
// Views in the default memory space) on the layer library (kernels/nn):
// matrix products with either operand transposed, the tanh GeLU and its
// derivative, element-wise sums, slices. Communication is done by the caller
// on host copies.
#include <Kokkos_Core.hpp>

#include "kernels/nn/activations.hpp"
#include "kernels/nn/gemm.hpp"

namespace sp::mp {

using Mat = Kokkos::View<double**, Kokkos::LayoutRight>;
using CMat = Kokkos::View<const double**, Kokkos::LayoutRight>;

// C = op(A) op(B), or C += op(A) op(B) when accumulating (weight gradients
// over micro-batches); op = transpose when the flag is set. The layer
// library's GEMM (kernels/nn) on the project's tiled kernel.
inline void matmul(CMat A, bool ta, CMat B, bool tb, Mat C, bool accumulate = false) {
  using sp::nn::Op;
  const int M = static_cast<int>(C.extent(0)), N = static_cast<int>(C.extent(1));
  const int K = static_cast<int>(ta ? A.extent(0) : A.extent(1));
  sp::nn::gemm(ta ? Op::T : Op::N, tb ? Op::T : Op::N, M, N, K, A.data(), int64_t(A.extent(1)), B.data(),
               int64_t(B.extent(1)), C.data(), int64_t(C.extent(1)), accumulate);
}

// GeLU (tanh form, as in Megatron-LM's fused bias_gelu) and its derivative: kernels/nn/activations.hpp.
using sp::nn::gelu;
using sp::nn::gelu_grad;
inline void gelu_forward(CMat Z, Mat H) { sp::nn::gelu_forward(Z.data(), H.data(), int64_t(Z.size())); }

// dZ = dH * GeLU'(Z)
inline void gelu_backward(CMat Z, CMat dH, Mat dZ) {
  sp::nn::gelu_backward(Z.data(), dH.data(), dZ.data(), int64_t(Z.size()));
}

// Y = A + B (residual connections).
inline void add(CMat A, CMat B, Mat Y) { sp::nn::add(A.data(), B.data(), Y.data(), int64_t(A.size())); }

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
