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
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "scaleproof/kokkos_compat.hpp"

namespace sp::nn {

// y, and per row its mean and rstd (kept for the backward).
template <class T>
void layernorm_forward(int rows, int n, const T* x, const T* gamma, const T* beta, T eps, T* y, T* mean, T* rstd) {
  Kokkos::parallel_for(
      "nn_layernorm", Kokkos::RangePolicy<>(0, rows), KOKKOS_LAMBDA(const int r) {
        const T* xr = x + int64_t(r) * n;
        T* yr = y + int64_t(r) * n;
        T s = 0;
        for (int j = 0; j < n; ++j) s += xr[j];
        const T mu = s / T(n);
        T v = 0;
        for (int j = 0; j < n; ++j) v += (xr[j] - mu) * (xr[j] - mu);
        const T rs = T(1) / sp::kx::sqrt(v / T(n) + eps);
        for (int j = 0; j < n; ++j) yr[j] = gamma[j] * ((xr[j] - mu) * rs) + beta[j];
        mean[r] = mu, rstd[r] = rs;
      });
}

// dx (rows x n), dgamma and dbeta (n, overwritten).
template <class T>
void layernorm_backward(int rows, int n, const T* x, const T* gamma, const T* mean, const T* rstd, const T* dy, T* dx,
                        T* dgamma, T* dbeta) {
  Kokkos::parallel_for(
      "nn_layernorm_grad_x", Kokkos::RangePolicy<>(0, rows), KOKKOS_LAMBDA(const int r) {
        const T* xr = x + int64_t(r) * n;
        const T* dyr = dy + int64_t(r) * n;
        T* dxr = dx + int64_t(r) * n;
        const T mu = mean[r], rs = rstd[r];
        T sg = 0, sgx = 0;
        for (int j = 0; j < n; ++j) {
          const T g = gamma[j] * dyr[j], xh = (xr[j] - mu) * rs;
          sg += g, sgx += g * xh;
        }
        const T mg = sg / T(n), mgx = sgx / T(n);
        for (int j = 0; j < n; ++j) {
          const T g = gamma[j] * dyr[j], xh = (xr[j] - mu) * rs;
          dxr[j] = rs * (g - mg - xh * mgx);
        }
      });
  Kokkos::parallel_for(
      "nn_layernorm_grad_w", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(const int j) {
        T sg = 0, sb = 0;
        for (int r = 0; r < rows; ++r) {
          const T d = dy[int64_t(r) * n + j];
          sb += d, sg += d * ((x[int64_t(r) * n + j] - mean[r]) * rstd[r]);
        }
        dgamma[j] = sg, dbeta[j] = sb;
      });
}

}  // namespace sp::nn
