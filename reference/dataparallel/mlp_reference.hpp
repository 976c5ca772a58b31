#pragma once
// Single-process reference trainer for the data-parallel MLP, in plain loops
// and long double, written independently of the Kokkos kernels. Besides the
// parameters after k Adam steps on the full global batch it returns, per
// parameter, a bound on |theta_kernel - theta_reference| for a trainer that
// computes in type T (unit roundoff u) and sums any of its dot products and
// batch sums in any order and over any split into ranks.
//
// The bound is a running error analysis carried alongside the computation
// (Higham, Accuracy and Stability, 2nd ed., Sec. 3.1 and 3.3): every value x
// carries e(x) >= |x_kernel - x_exact|.
//  - sum of n products (any order, any split): gamma_n * sum |terms| for its own
//    rounding, plus sum(|a| e(b) + e(a) |b| + e(a) e(b)) for the inputs' errors.
//  - GeLU: Lipschitz 1.13 (max |gelu'|) on the input error plus 16 u |z| for
//    its evaluation; gelu' likewise with Lipschitz 0.80 (max |gelu''|) and
//    16 u (1 + |z| (1 + 0.134 z^2)) (docs/dataparallel.md derives both
//    evaluation terms, about half these, and doubles them for tanh's ulps).
//  - Adam: m, v are affine in g and g^2; sqrt and the quotient are bounded
//    exactly (|sqrt a - sqrt b| <= min(|a-b| / (2 sqrt b), sqrt|a-b|)), and
//    every update is also capped by 2 lr R_t, where R_t >= |mhat| / sqrt(vhat)
//    holds for any gradient sequence (Cauchy-Schwarz over the EMA weights).
// Parameter errors of step t enter step t+1's forward and backward passes.
// The reference's own rounding (u_ref = 2^-64) is added to u.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/dataparallel/mlp_shape.hpp"

namespace sp::dp::ref {

using R = long double;

struct Result {
  std::vector<R> theta;       // parameters after the steps
  std::vector<double> bound;  // |theta_kernel - theta| <= bound, per parameter
};

namespace detail {

inline double gamma(double n, double u) { return n * u < 1 ? n * u / (1 - n * u) : INFINITY; }

// The exact cap on one Adam update, |lr mhat / (sqrt(vhat) + eps)| <= lr R_t.
inline R adam_ratio_cap(R b1, R b2, int t) {
  R s = 0;
  for (int j = 0; j < t; ++j) s += std::pow(b1 * b1 / b2, static_cast<R>(j));
  return (1 - b1) * std::sqrt(1 - std::pow(b2, static_cast<R>(t))) /
         ((1 - std::pow(b1, static_cast<R>(t))) * std::sqrt(1 - b2)) * std::sqrt(s);
}

inline R gelu(R z) {
  return z / 2 * (1 + std::tanh(static_cast<R>(kGeluK) * (z + static_cast<R>(kGeluC) * z * z * z)));
}
inline R gelu_grad(R z) {
  const R k = kGeluK, c = kGeluC, t = std::tanh(k * (z + c * z * z * z));
  return (1 + t) / 2 + z / 2 * (1 - t * t) * k * (1 + 3 * c * z * z);
}

}  // namespace detail

// X: batch x dims[0], Y: batch x dims[L], theta0: initial parameters, all in the
// kernel's type T (so both start from identical values).
template <class T>
Result train(const MlpShape& s, int batch, int steps, const AdamConfig& cfg, const std::vector<T>& theta0,
             const std::vector<T>& X, const std::vector<T>& Y, double u_kernel) {
  using detail::gamma;
  const double u = u_kernel + std::ldexp(1.0, -64);
  const int L = s.layers();
  const R lr = static_cast<T>(cfg.lr), b1 = static_cast<T>(cfg.beta1), b2 = static_cast<T>(cfg.beta2),
          eps = static_cast<T>(cfg.eps);
  const size_t n = s.n_params();
  std::vector<R> th(theta0.begin(), theta0.end()), m(n, 0), v(n, 0), g(n);
  std::vector<double> eth(n, 0), em(n, 0), ev(n, 0), eg(n);
  // Activations per layer: z (pre-activation), a (output), and their error bounds.
  std::vector<std::vector<R>> z(L + 1), a(L + 1);
  std::vector<std::vector<double>> ez(L + 1), ea(L + 1);
  a[0].assign(X.begin(), X.end());
  ea[0].assign(X.size(), 0.0);

  for (int t = 1; t <= steps; ++t) {
    // Forward.
    for (int l = 1; l <= L; ++l) {
      const int din = s.in(l), dout = s.out(l);
      const size_t o = s.block_offset(l), ob = o + static_cast<size_t>(dout) * din;
      z[l].assign(static_cast<size_t>(batch) * dout, 0), a[l] = z[l];
      ez[l].assign(z[l].size(), 0.0), ea[l] = ez[l];
      for (int b = 0; b < batch; ++b)
        for (int j = 0; j < dout; ++j) {
          R acc = th[ob + j], mag = std::fabs(th[ob + j]);
          double err = eth[ob + j];
          for (int k = 0; k < din; ++k) {
            const size_t w = o + static_cast<size_t>(j) * din + k, x = static_cast<size_t>(b) * din + k;
            acc += th[w] * a[l - 1][x];
            mag += std::fabs(th[w] * a[l - 1][x]);
            err += std::fabs(th[w]) * ea[l - 1][x] + eth[w] * std::fabs(a[l - 1][x]) + eth[w] * ea[l - 1][x];
          }
          const size_t i = static_cast<size_t>(b) * dout + j;
          z[l][i] = acc;
          ez[l][i] = err + gamma(din + 1, u) * mag;
          const bool hidden = l < L;
          a[l][i] = hidden ? detail::gelu(acc) : acc;
          ea[l][i] = hidden ? 1.13 * ez[l][i] + 16 * u * (std::fabs(acc) + ez[l][i]) : ez[l][i];
        }
    }
    // Loss gradient dY = (Y - target) / B.
    std::vector<R> dz(a[L].size());
    std::vector<double> edz(a[L].size());
    for (size_t i = 0; i < dz.size(); ++i) {
      dz[i] = (a[L][i] - static_cast<R>(Y[i])) / batch;
      edz[i] = ea[L][i] / batch * (1 + 3 * u) + 3 * u * std::fabs(dz[i]);
    }
    // Backward.
    for (int l = L; l >= 1; --l) {
      const int din = s.in(l), dout = s.out(l);
      const size_t o = s.block_offset(l), ob = o + static_cast<size_t>(dout) * din;
      for (int j = 0; j < dout; ++j) {
        for (int k = 0; k <= din; ++k) {
          R acc = 0, mag = 0;
          double err = 0;
          for (int b = 0; b < batch; ++b) {
            const size_t i = static_cast<size_t>(b) * dout + j;
            const R x = k < din ? a[l - 1][static_cast<size_t>(b) * din + k] : 1;
            const double ex = k < din ? ea[l - 1][static_cast<size_t>(b) * din + k] : 0;
            acc += dz[i] * x;
            mag += std::fabs(dz[i] * x);
            err += edz[i] * std::fabs(x) + std::fabs(dz[i]) * ex + edz[i] * ex;
          }
          const size_t gi = k < din ? o + static_cast<size_t>(j) * din + k : ob + j;
          g[gi] = acc;
          eg[gi] = err + gamma(batch, u) * mag;
        }
      }
      if (l == 1) break;
      std::vector<R> dprev(static_cast<size_t>(batch) * din);
      std::vector<double> eprev(dprev.size());
      for (int b = 0; b < batch; ++b)
        for (int k = 0; k < din; ++k) {
          R acc = 0, mag = 0;
          double err = 0;
          for (int j = 0; j < dout; ++j) {
            const size_t w = o + static_cast<size_t>(j) * din + k, i = static_cast<size_t>(b) * dout + j;
            acc += th[w] * dz[i];
            mag += std::fabs(th[w] * dz[i]);
            err += std::fabs(th[w]) * edz[i] + eth[w] * std::fabs(dz[i]) + eth[w] * edz[i];
          }
          const double eda = err + gamma(dout, u) * mag;
          const size_t i = static_cast<size_t>(b) * din + k;
          const R zp = z[l - 1][i];
          const double zmax = std::fabs(static_cast<double>(zp)) + ez[l - 1][i];
          const R gp = detail::gelu_grad(zp);
          const double egp = 0.80 * ez[l - 1][i] + 16 * u * (1 + zmax * (1 + 0.134 * zmax * zmax));
          dprev[i] = acc * gp;
          eprev[i] = eda * std::fabs(gp) + std::fabs(acc) * egp + eda * egp +
                     u * (std::fabs(acc) + eda) * (std::fabs(gp) + egp);
        }
      dz.swap(dprev), edz.swap(eprev);
    }
    // Adam.
    const R c1 = 1 - std::pow(b1, static_cast<R>(t)), c2 = 1 - std::pow(b2, static_cast<R>(t));
    // The kernel rounds beta^t to T before subtracting: relative error on 1 - beta^t.
    const double rc1 = 2 * u * std::pow(b1, t) / c1 + u, rc2 = 2 * u * std::pow(b2, t) / c2 + u;
    const double cap = 2 * lr * detail::adam_ratio_cap(b1, b2, t) * (1 + 8 * u * t);
    for (size_t i = 0; i < n; ++i) {
      const R mi = b1 * m[i] + (1 - b1) * g[i];
      const R vi = b2 * v[i] + (1 - b2) * g[i] * g[i];
      em[i] =
          (1 + 3 * u) * (b1 * em[i] + (1 - b1) * eg[i]) + 3 * u * (b1 * std::fabs(m[i]) + (1 - b1) * std::fabs(g[i]));
      ev[i] = (1 + 4 * u) * (b2 * ev[i] + (1 - b2) * (2 * std::fabs(g[i]) * eg[i] + eg[i] * eg[i])) +
              4 * u * (b2 * v[i] + (1 - b2) * g[i] * g[i]);
      m[i] = mi, v[i] = vi;
      const R mh = mi / c1, vh = vi / c2;
      const double emh = em[i] / c1 + std::fabs(mh) * (rc1 + u), evh = ev[i] / c2 + vh * (rc2 + u);
      const R sq = std::sqrt(vh);
      const double esq0 = sq > 0 ? std::min<double>(evh / (2 * sq), std::sqrt(evh)) : std::sqrt(evh);
      const double esq = esq0 + u * (sq + esq0);
      const R d = sq + eps;
      const double ed = esq + u * (d + esq);
      const R q = mh / d;
      double eupd = INFINITY;
      if (ed < d) {
        const double eq = (emh * d + std::fabs(mh) * ed) / (d * (d - ed));
        eupd = lr * (eq + u * (std::fabs(q) + eq)) + u * lr * (std::fabs(q) + eq);
      }
      eupd = std::min(eupd, cap);
      th[i] -= lr * q;
      eth[i] = eth[i] + eupd + u * (std::fabs(th[i]) + eth[i] + eupd);
    }
  }
  return {th, eth};
}

}  // namespace sp::dp::ref
