#pragma once
// Row-wise softmax of scaled scores, optionally causal, and its backward.
// Row r of a block of s rows is query position q = r % s; with causal
// masking only columns k <= q take part, the others are exactly 0:
//   P[r][k] = exp(a x_k - m) / sum_{k' valid} exp(a x_k' - m),  m = max_valid a x_k
//   dX[r][k] = P[r][k] (dP[r][k] - sum_{k' valid} dP[r][k'] P[r][k'])
// (the scale a is applied by the caller's chain rule in the backward).
// Each row is one work item summing in column order; the reference in
// reference/nn evaluates the same expressions in the same order, so the
// results are bitwise equal. FLOPs: about 4 per element each way.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "scaleproof/kokkos_compat.hpp"

namespace sp::nn {

struct SoftmaxShape {
  int rows, cols;
  int64_t ld;
  int causal_block = 0;  // s: rows are query positions r % s, columns k > r % s masked; 0 = no mask
};

// In place: x (scores) becomes P.
template <class T>
void softmax_forward(const SoftmaxShape& sh, T* x, T scale) {
  const int cols = sh.cols, s = sh.causal_block;
  const int64_t ld = sh.ld;
  Kokkos::parallel_for(
      "nn_softmax", Kokkos::RangePolicy<>(0, sh.rows), KOKKOS_LAMBDA(const int r) {
        T* row = x + r * ld;
        const int valid = s > 0 ? r % s + 1 : cols;
        T mx = row[0] * scale;
        for (int k = 0; k < valid; ++k) {
          row[k] = row[k] * scale;
          mx = sp::kx::max(mx, row[k]);
        }
        T den = 0;
        for (int k = 0; k < valid; ++k) {
          row[k] = sp::kx::exp(row[k] - mx);
          den += row[k];
        }
        for (int k = 0; k < cols; ++k) row[k] = k < valid ? row[k] / den : T(0);
      });
}

// In place: dp (the gradient with respect to P) becomes the gradient with
// respect to the scaled scores.
template <class T>
void softmax_backward(const SoftmaxShape& sh, const T* P, T* dp) {
  const int cols = sh.cols, s = sh.causal_block;
  const int64_t ld = sh.ld;
  Kokkos::parallel_for(
      "nn_softmax_grad", Kokkos::RangePolicy<>(0, sh.rows), KOKKOS_LAMBDA(const int r) {
        const T* p = P + r * ld;
        T* g = dp + r * ld;
        const int valid = s > 0 ? r % s + 1 : cols;
        T c = 0;
        for (int k = 0; k < valid; ++k) c += g[k] * p[k];
        for (int k = 0; k < cols; ++k) g[k] = k < valid ? p[k] * (g[k] - c) : T(0);
      });
}

}  // namespace sp::nn
