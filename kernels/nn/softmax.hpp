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
// Storage type S: the scores are widened with load() and every intermediate
// (scaled score, maximum, exponential, denominator) stays in AccOf<S> (fp32
// for 16-bit storage); each probability and each gradient is rounded once
// into S. The exponential is evaluated again for the output instead of
// being stored in S between the passes (one rounding per probability); fp32
// and fp64 keep the in-place passes above unchanged.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include "kernels/nn/gemm.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::nn {

struct SoftmaxShape {
  int rows, cols;
  int64_t ld;
  int causal_block = 0;  // s: rows are query positions r % s, columns k > r % s masked; 0 = no mask
};

// In place: x (scores) becomes P.
template <class S>
SP_UNIT_LOCAL void softmax_forward(const SoftmaxShape& sh, S* x, typename AccOf<S>::type scale) {
  using A = typename AccOf<S>::type;
  const int cols = sh.cols, s = sh.causal_block;
  const int64_t ld = sh.ld;
  if constexpr (std::is_same<S, A>::value) {
    Kokkos::parallel_for(
        "nn_softmax", Kokkos::RangePolicy<>(0, sh.rows), KOKKOS_LAMBDA(const int r) {
          S* row = x + r * ld;
          const int valid = s > 0 ? r % s + 1 : cols;
          S mx = row[0] * scale;
          for (int k = 0; k < valid; ++k) {
            row[k] = row[k] * scale;
            mx = sp::kx::max(mx, row[k]);
          }
          S den = 0;
          for (int k = 0; k < valid; ++k) {
            row[k] = sp::kx::exp(row[k] - mx);
            den += row[k];
          }
          for (int k = 0; k < cols; ++k) row[k] = k < valid ? row[k] / den : S(0);
        });
  } else {
    Kokkos::parallel_for(
        "nn_softmax", Kokkos::RangePolicy<>(0, sh.rows), KOKKOS_LAMBDA(const int r) {
          S* row = x + r * ld;
          const int valid = s > 0 ? r % s + 1 : cols;
          A mx = load(row[0]) * scale;
          for (int k = 0; k < valid; ++k) mx = sp::kx::max(mx, A(load(row[k]) * scale));
          A den = 0;
          for (int k = 0; k < valid; ++k) den += sp::kx::exp(A(load(row[k]) * scale) - mx);
          for (int k = 0; k < cols; ++k)
            row[k] = store_as<S>(k < valid ? A(sp::kx::exp(A(load(row[k]) * scale) - mx) / den) : A(0), 0);
        });
  }
}

// In place: dp (the gradient with respect to P) becomes the gradient with
// respect to the scaled scores.
template <class S>
SP_UNIT_LOCAL void softmax_backward(const SoftmaxShape& sh, const S* P, S* dp) {
  using A = typename AccOf<S>::type;
  const int cols = sh.cols, s = sh.causal_block;
  const int64_t ld = sh.ld;
  Kokkos::parallel_for(
      "nn_softmax_grad", Kokkos::RangePolicy<>(0, sh.rows), KOKKOS_LAMBDA(const int r) {
        const S* p = P + r * ld;
        S* g = dp + r * ld;
        const int valid = s > 0 ? r % s + 1 : cols;
        A c = 0;
        for (int k = 0; k < valid; ++k) c += load(g[k]) * load(p[k]);
        for (int k = 0; k < cols; ++k) g[k] = store_as<S>(k < valid ? A(load(p[k]) * (load(g[k]) - c)) : A(0), 0);
      });
}

}  // namespace sp::nn
