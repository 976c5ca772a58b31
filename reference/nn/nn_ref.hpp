#pragma once
// Plain-loop references for the layer library (kernels/nn), written from the
// formulas in docs/nn.md, not from the kernels. Host vectors, row-major.
//  - Products (gemm, linear) in long double, returning per element the exact
//    value and sum |a||b| for the gamma_K bound (Higham, eq. 3.5).
//  - Row-wise and element-wise layers in the kernel's type T, each row's sums
//    in column order: the kernels evaluate the same expressions in the same
//    order, so those are compared bit for bit.
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/nn/tanh_f64.hpp"

namespace sp::reference::nn {

using R = long double;

struct ProductRef {
  std::vector<R> value, abs;  // C exactly (from the stored inputs) and sum |a||b| per element
};

// C = op(A) op(B) (+ Cold): A stored M x K (or K x M when ta), B K x N (or N x K when tb).
inline ProductRef gemm(int M, int N, int K, const std::vector<double>& A, bool ta, const std::vector<double>& B,
                       bool tb, const std::vector<double>* Cold = nullptr) {
  ProductRef r{std::vector<R>(size_t(M) * N), std::vector<R>(size_t(M) * N)};
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      R s = Cold ? R((*Cold)[size_t(i) * N + j]) : 0, a = Cold ? std::fabs(s) : 0;
      for (int k = 0; k < K; ++k) {
        const R p = R(A[ta ? size_t(k) * M + i : size_t(i) * K + k]) * R(B[tb ? size_t(j) * K + k : size_t(k) * N + j]);
        s += p, a += std::fabs(p);
      }
      r.value[size_t(i) * N + j] = s, r.abs[size_t(i) * N + j] = a;
    }
  return r;
}

constexpr double kGeluK = 0.7978845608028654, kGeluC = 0.044715;

// tanh in T: for float the double library tanh rounded to float (the float
// nearest the true value, which the kernel's float tanh returns); for double
// the kernels' own fp64 tanh, which is not correctly rounded, so that the
// layers' formulas can still be compared bit for bit (its accuracy, within
// 4u of the true value, is checked against long double on its own).
template <class T>
T tanh_in(T x) {
  if constexpr (std::is_same<T, double>::value)
    return sp::nn::tanh_f64(x);
  else
    return static_cast<T>(std::tanh(static_cast<double>(x)));
}

template <class T>
T gelu(T z) {
  const T t = tanh_in(T(kGeluK) * (z + T(kGeluC) * z * z * z));
  return T(0.5) * z * (T(1) + t);
}
template <class T>
T gelu_grad(T z) {
  const T t = tanh_in(T(kGeluK) * (z + T(kGeluC) * z * z * z));
  const T f = T(0.5) * z * T(kGeluK) * (T(1) + T(3) * T(kGeluC) * z * z);
  return T(0.5) * (T(1) + t) + f * (T(1) - t * t);
}

// Row-wise softmax of a * x with key k > r % s masked when s > 0 (in place),
// and its backward (g: dL/dP in, dL/d(a x) out).
template <class T>
void softmax(std::vector<T>& x, int rows, int cols, int s, T a) {
  for (int r = 0; r < rows; ++r) {
    T* row = &x[size_t(r) * cols];
    const int n = s > 0 ? r % s + 1 : cols;
    T m = row[0] * a;
    for (int k = 0; k < n; ++k) row[k] = row[k] * a, m = row[k] > m ? row[k] : m;
    T sum = 0;
    for (int k = 0; k < n; ++k) row[k] = std::exp(row[k] - m), sum += row[k];
    for (int k = 0; k < cols; ++k) row[k] = k < n ? row[k] / sum : T(0);
  }
}
template <class T>
void softmax_grad(const std::vector<T>& P, std::vector<T>& g, int rows, int cols, int s) {
  for (int r = 0; r < rows; ++r) {
    const int n = s > 0 ? r % s + 1 : cols;
    T dot = 0;
    for (int k = 0; k < n; ++k) dot += g[size_t(r) * cols + k] * P[size_t(r) * cols + k];
    for (int k = 0; k < cols; ++k) {
      T& gk = g[size_t(r) * cols + k];
      gk = k < n ? P[size_t(r) * cols + k] * (gk - dot) : T(0);
    }
  }
}

// Layer norm over rows of n; returns y and fills mean, rstd.
template <class T>
std::vector<T> layernorm(const std::vector<T>& x, int rows, int n, const std::vector<T>& g, const std::vector<T>& b,
                         T eps, std::vector<T>& mean, std::vector<T>& rstd) {
  std::vector<T> y(x.size());
  mean.assign(rows, 0), rstd.assign(rows, 0);
  for (int r = 0; r < rows; ++r) {
    const T* xr = &x[size_t(r) * n];
    T s = 0;
    for (int j = 0; j < n; ++j) s += xr[j];
    const T mu = s / T(n);
    T v = 0;
    for (int j = 0; j < n; ++j) v += (xr[j] - mu) * (xr[j] - mu);
    const T rs = T(1) / std::sqrt(v / T(n) + eps);
    for (int j = 0; j < n; ++j) y[size_t(r) * n + j] = g[j] * ((xr[j] - mu) * rs) + b[j];
    mean[r] = mu, rstd[r] = rs;
  }
  return y;
}
template <class T>
void layernorm_grad(const std::vector<T>& x, int rows, int n, const std::vector<T>& g, const std::vector<T>& mean,
                    const std::vector<T>& rstd, const std::vector<T>& dy, std::vector<T>& dx, std::vector<T>& dg,
                    std::vector<T>& db) {
  dx.assign(x.size(), 0), dg.assign(n, 0), db.assign(n, 0);
  for (int r = 0; r < rows; ++r) {
    T a = 0, c = 0;
    for (int j = 0; j < n; ++j) {
      const size_t i = size_t(r) * n + j;
      const T gj = g[j] * dy[i], xh = (x[i] - mean[r]) * rstd[r];
      a += gj, c += gj * xh;
    }
    const T ma = a / T(n), mc = c / T(n);
    for (int j = 0; j < n; ++j) {
      const size_t i = size_t(r) * n + j;
      const T gj = g[j] * dy[i], xh = (x[i] - mean[r]) * rstd[r];
      dx[i] = rstd[r] * (gj - ma - xh * mc);
    }
  }
  for (int j = 0; j < n; ++j) {
    T sg = 0, sb = 0;
    for (int r = 0; r < rows; ++r) {
      const size_t i = size_t(r) * n + j;
      sb += dy[i], sg += dy[i] * ((x[i] - mean[r]) * rstd[r]);
    }
    dg[j] = sg, db[j] = sb;
  }
}

// One Adam step (bias-corrected) on every element.
template <class T>
void adam(std::vector<T>& th, const std::vector<T>& g, std::vector<T>& m, std::vector<T>& v, double lr, double b1d,
          double b2d, double epsd, int t) {
  const T a = T(lr), b1 = T(b1d), b2 = T(b2d), eps = T(epsd);
  const T c1 = T(1) - T(std::pow(b1, t)), c2 = T(1) - T(std::pow(b2, t));
  for (size_t i = 0; i < th.size(); ++i) {
    m[i] = b1 * m[i] + (T(1) - b1) * g[i];
    v[i] = b2 * v[i] + (T(1) - b2) * g[i] * g[i];
    th[i] -= a * (m[i] / c1) / (std::sqrt(v[i] / c2) + eps);
  }
}

}  // namespace sp::reference::nn
