#pragma once
// Reference for low-rank layers (docs/compression.md), plain loops in long
// double. The weight is built with a known spectrum, W = H_U D H_V with D
// diagonal (the singular values, power law s_i = s_0 / (i + 1)) and H_U,
// H_V products of three Householder reflectors (orthogonal), so singular
// values and the Eckart-Young error sqrt(sum_{i >= r} s_i^2) are known
// without any SVD.
#include <cmath>
#include <cstdint>
#include <vector>

namespace sp::reference {

inline std::vector<long double> power_law_spectrum(int k, long double s0) {
  std::vector<long double> s(k);
  for (int i = 0; i < k; ++i) s[i] = s0 / (i + 1);
  return s;
}

// W (M x N, row-major) = H_U diag(s) H_V, s of length min(M, N).
inline std::vector<long double> spectrum_matrix_ref(int M, int N, const std::vector<long double>& s, uint64_t seed) {
  std::vector<long double> W(size_t(M) * N, 0.0L);
  for (size_t i = 0; i < s.size(); ++i) W[i * N + i] = s[i];
  auto uni = [&seed] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (long double)(seed >> 11) * 0x1p-53L * 2 - 1;
  };
  for (int h = 0; h < 3; ++h) {
    std::vector<long double> v(M), w(N);
    long double vv = 0, ww = 0;
    for (auto& x : v) x = uni(), vv += x * x;
    for (auto& x : w) x = uni(), ww += x * x;
    for (int j = 0; j < N; ++j) {  // W <- (I - 2 v v^T / v^T v) W
      long double d = 0;
      for (int i = 0; i < M; ++i) d += v[i] * W[size_t(i) * N + j];
      for (int i = 0; i < M; ++i) W[size_t(i) * N + j] -= 2 * v[i] * d / vv;
    }
    for (int i = 0; i < M; ++i) {  // W <- W (I - 2 w w^T / w^T w)
      long double d = 0;
      for (int j = 0; j < N; ++j) d += W[size_t(i) * N + j] * w[j];
      for (int j = 0; j < N; ++j) W[size_t(i) * N + j] -= 2 * d * w[j] / ww;
    }
  }
  return W;
}

// Eckart-Young: the least ||W - X||_F over rank-r X, sqrt(sum_{i >= r} s_i^2).
inline long double eckart_young_ref(const std::vector<long double>& s, int r) {
  long double t = 0;
  for (size_t i = r; i < s.size(); ++i) t += s[i] * s[i];
  return std::sqrt(t);
}

// ||W - P Q||_F with P (M x r), Q (r x N) row-major.
inline long double lowrank_error_ref(const std::vector<float>& W, const std::vector<float>& P,
                                     const std::vector<float>& Q, int M, int N, int r) {
  long double e = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      long double pq = 0;
      for (int c = 0; c < r; ++c) pq += (long double)P[size_t(i) * r + c] * Q[size_t(c) * N + j];
      const long double d = W[size_t(i) * N + j] - pq;
      e += d * d;
    }
  return std::sqrt(e);
}

// Y = X A (B x K times K x N) exactly, with |X| |A| alongside.
inline void product_ref(int B, int K, int N, const std::vector<long double>& X, const std::vector<long double>& A,
                        std::vector<long double>& Y, std::vector<long double>& absY) {
  Y.assign(size_t(B) * N, 0.0L), absY.assign(Y.size(), 0.0L);
  for (int b = 0; b < B; ++b)
    for (int k = 0; k < K; ++k) {
      const long double x = X[size_t(b) * K + k];
      for (int j = 0; j < N; ++j) {
        const long double a = A[size_t(k) * N + j];
        Y[size_t(b) * N + j] += x * a;
        absY[size_t(b) * N + j] += std::fabs(x * a);
      }
    }
}

template <class T>
std::vector<long double> widen(const std::vector<T>& v) {
  return std::vector<long double>(v.begin(), v.end());
}

}  // namespace sp::reference
