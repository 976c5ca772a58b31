#pragma once
// Layer normalization over the last dimension (Ba et al. 2016), per row of n:
//   mu = sum x / n,  var = sum (x - mu)^2 / n,  rstd = 1 / sqrt(var + eps)
//   xhat = (x - mu) rstd,  y = gamma xhat + beta
// Backward, per row (dy given): dbeta += dy, dgamma += dy xhat, and
//   dx = rstd (g - mean(g) - xhat mean(g xhat)),  g = gamma dy.
// One work item per row, sums in column order (the weight gradients one
// work item per column, summed over rows in order); the reference in
// reference/nn evaluates the same expressions in the same order: bitwise
// equal (dgamma up to the contraction of its multiply-adds into FMAs, which
// the compiler may choose differently). FLOPs: about 8 n per row forward,
// 12 n backward.
// Storage type S (fp32, fp64, or 16-bit): arithmetic in AccOf<S> (fp32 for
// 16-bit storage), every stored input widened with load(), every output
// rounded once into S with store_as; the statistics (mean, rstd) and the
// gamma and beta gradients stay in AccOf<S>. For fp32 and fp64 the
// expressions are the ones above, unchanged bit for bit.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "kernels/nn/gemm.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::nn {

// y, and per row its mean and rstd (kept for the backward).
template <class S>
SP_UNIT_LOCAL void layernorm_forward(int rows, int n, const S* x, const S* gamma, const S* beta,
                                     typename AccOf<S>::type eps, S* y, typename AccOf<S>::type* mean,
                                     typename AccOf<S>::type* rstd) {
  using A = typename AccOf<S>::type;
  Kokkos::parallel_for(
      "nn_layernorm", Kokkos::RangePolicy<>(0, rows), KOKKOS_LAMBDA(const int r) {
        const S* xr = x + int64_t(r) * n;
        S* yr = y + int64_t(r) * n;
        A s = 0;
        for (int j = 0; j < n; ++j) s += load(xr[j]);
        const A mu = s / A(n);
        A v = 0;
        for (int j = 0; j < n; ++j) v += (load(xr[j]) - mu) * (load(xr[j]) - mu);
        const A rs = A(1) / sp::kx::sqrt(v / A(n) + eps);
        for (int j = 0; j < n; ++j) yr[j] = store_as<S>(load(gamma[j]) * ((load(xr[j]) - mu) * rs) + load(beta[j]), 0);
        mean[r] = mu, rstd[r] = rs;
      });
}

// dx (rows x n, in S), dgamma and dbeta (n, in AccOf<S>, overwritten).
template <class S>
SP_UNIT_LOCAL void layernorm_backward(int rows, int n, const S* x, const S* gamma, const typename AccOf<S>::type* mean,
                                      const typename AccOf<S>::type* rstd, const S* dy, S* dx,
                                      typename AccOf<S>::type* dgamma, typename AccOf<S>::type* dbeta) {
  using A = typename AccOf<S>::type;
  Kokkos::parallel_for(
      "nn_layernorm_grad_x", Kokkos::RangePolicy<>(0, rows), KOKKOS_LAMBDA(const int r) {
        const S* xr = x + int64_t(r) * n;
        const S* dyr = dy + int64_t(r) * n;
        S* dxr = dx + int64_t(r) * n;
        const A mu = mean[r], rs = rstd[r];
        A sg = 0, sgx = 0;
        for (int j = 0; j < n; ++j) {
          const A g = load(gamma[j]) * load(dyr[j]), xh = (load(xr[j]) - mu) * rs;
          sg += g, sgx += g * xh;
        }
        const A mg = sg / A(n), mgx = sgx / A(n);
        for (int j = 0; j < n; ++j) {
          const A g = load(gamma[j]) * load(dyr[j]), xh = (load(xr[j]) - mu) * rs;
          dxr[j] = store_as<S>(rs * (g - mg - xh * mgx), 0);
        }
      });
  Kokkos::parallel_for(
      "nn_layernorm_grad_w", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(const int j) {
        A sg = 0, sb = 0;
        for (int r = 0; r < rows; ++r) {
          const A d = load(dy[int64_t(r) * n + j]);
          sb += d, sg += d * ((load(x[int64_t(r) * n + j]) - mean[r]) * rstd[r]);
        }
        dgamma[j] = sg, dbeta[j] = sb;
      });
}

}  // namespace sp::nn
