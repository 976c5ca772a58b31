#pragma once
// Thin SVD of a dense M x N matrix by one-sided (Hestenes) Jacobi in double
// on the host: plane rotations of column pairs of G (W, or W^T when M < N)
// until every pair is orthogonal to |g_i . g_j| <= tol |g_i| |g_j|; then
// G V = U diag(s), W = U diag(s) V^T. Singular values come out sorted,
// largest first. Jacobi's backward error is O(n u) per sweep (Demmel and
// Veselic 1992): far below the fp32 roundings of the factors built from it.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace sp::precision {

struct Svd {
  int M = 0, N = 0, k = 0;  // W is M x N, k = min(M, N) singular triplets
  std::vector<double> U;    // M x k, row-major
  std::vector<double> s;    // k, descending
  std::vector<double> V;    // N x k, row-major
  int sweeps = 0;
};

inline Svd svd_jacobi(const std::vector<double>& W, int M, int N, double tol = 1e-14, int max_sweeps = 60) {
  const bool tr = M < N;
  const int m = tr ? N : M, n = tr ? M : N;                     // G is m x n with m >= n
  std::vector<double> G(size_t(m) * n), V(size_t(n) * n, 0.0);  // G column-major: column j at j*m
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) (tr ? G[size_t(i) * m + j] : G[size_t(j) * m + i]) = W[size_t(i) * N + j];
  for (int j = 0; j < n; ++j) V[size_t(j) * n + j] = 1;  // column-major too
  Svd out;
  out.M = M, out.N = N, out.k = n;
  for (bool rotated = true; rotated && out.sweeps < max_sweeps; ++out.sweeps) {
    rotated = false;
    for (int p = 0; p < n - 1; ++p)
      for (int q = p + 1; q < n; ++q) {
        double* gp = &G[size_t(p) * m];
        double* gq = &G[size_t(q) * m];
        double a = 0, b = 0, c = 0;
        for (int i = 0; i < m; ++i) a += gp[i] * gp[i], b += gq[i] * gq[i], c += gp[i] * gq[i];
        if (std::fabs(c) <= tol * std::sqrt(a * b) || c == 0) continue;
        rotated = true;
        // The rotation that zeroes c (Golub and Van Loan, the symmetric Schur step).
        const double zeta = (b - a) / (2 * c);
        const double t = (zeta >= 0 ? 1 : -1) / (std::fabs(zeta) + std::sqrt(1 + zeta * zeta));
        const double cs = 1 / std::sqrt(1 + t * t), sn = cs * t;
        for (int i = 0; i < m; ++i) {
          const double x = gp[i], y = gq[i];
          gp[i] = cs * x - sn * y, gq[i] = sn * x + cs * y;
        }
        double* vp = &V[size_t(p) * n];
        double* vq = &V[size_t(q) * n];
        for (int i = 0; i < n; ++i) {
          const double x = vp[i], y = vq[i];
          vp[i] = cs * x - sn * y, vq[i] = sn * x + cs * y;
        }
      }
  }
  std::vector<double> norm(n);
  for (int j = 0; j < n; ++j) {
    double s = 0;
    for (int i = 0; i < m; ++i) s += G[size_t(j) * m + i] * G[size_t(j) * m + i];
    norm[j] = std::sqrt(s);
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return norm[x] > norm[y]; });
  // G's columns over their norms are the left vectors of G; V's the right ones.
  // For G = W^T they swap roles: W = V diag(s) U_G^T.
  std::vector<double> L(size_t(m) * n), R(size_t(n) * n);
  out.s.resize(n);
  for (int c = 0; c < n; ++c) {
    const int j = order[c];
    out.s[c] = norm[j];
    for (int i = 0; i < m; ++i) L[size_t(i) * n + c] = norm[j] > 0 ? G[size_t(j) * m + i] / norm[j] : 0.0;
    for (int i = 0; i < n; ++i) R[size_t(i) * n + c] = V[size_t(j) * n + i];
  }
  out.U = tr ? R : L;
  out.V = tr ? L : R;
  return out;
}

}  // namespace sp::precision
