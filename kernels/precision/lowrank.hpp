#pragma once
// Low-rank linear layer (docs/compression.md): W (M x N) replaced by its
// rank-r truncated SVD W_r = P Q, P = U_r diag(s_r) (M x r), Q = V_r^T
// (r x N), both fp32. Forward Y = X W_r = (X P) Q for X (B x M): two GEMMs
// on the layer library's product, 2 B r (M + N) FLOPs against 2 B M N, and
// r (M + N) parameters against M N. By Eckart and Young (1936),
// ||W - W_r||_F = sqrt(sum_{i > r} s_i^2) is the least any rank-r matrix reaches.
#include <Kokkos_Core.hpp>
#include <vector>

#include "kernels/nn/gemm.hpp"
#include "kernels/precision/flop_count.hpp"
#include "kernels/precision/svd_jacobi.hpp"

namespace sp::precision {

struct LowRank {
  int M = 0, N = 0, r = 0;
  Kokkos::View<float*> P, Q;  // M x r and r x N, row-major
  double params() const { return double(P.span() + Q.span()); }
};

inline LowRank truncate(const Svd& svd, int r) {
  LowRank lr;
  lr.M = svd.M, lr.N = svd.N, lr.r = r;
  lr.P = Kokkos::View<float*>("lowrank_P", size_t(svd.M) * r);
  lr.Q = Kokkos::View<float*>("lowrank_Q", size_t(r) * svd.N);
  auto hp = Kokkos::create_mirror_view(lr.P);
  auto hq = Kokkos::create_mirror_view(lr.Q);
  for (int i = 0; i < svd.M; ++i)
    for (int c = 0; c < r; ++c) hp(size_t(i) * r + c) = float(svd.U[size_t(i) * svd.k + c] * svd.s[c]);
  for (int c = 0; c < r; ++c)
    for (int j = 0; j < svd.N; ++j) hq(size_t(c) * svd.N + j) = float(svd.V[size_t(j) * svd.k + c]);
  Kokkos::deep_copy(lr.P, hp);
  Kokkos::deep_copy(lr.Q, hq);
  return lr;
}

// Y (B x N) = (X P) Q, T (B x r) the intermediate.
inline void lowrank_forward(int B, const float* X, const LowRank& lr, float* T, float* Y, FlopCount* count = nullptr) {
  nn::gemm(nn::Op::N, nn::Op::N, B, lr.r, lr.M, X, lr.M, lr.P.data(), lr.r, T, lr.r);
  nn::gemm(nn::Op::N, nn::Op::N, B, lr.N, lr.r, T, lr.r, lr.Q.data(), lr.N, Y, lr.N);
  if (count) count->add(B, lr.r, lr.M), count->add(B, lr.N, lr.r);
}

// The dense layer it replaces: Y = X W.
inline void dense_forward(int B, int M, int N, const float* X, const float* W, float* Y, FlopCount* count = nullptr) {
  nn::gemm(nn::Op::N, nn::Op::N, B, N, M, X, M, W, N, Y, N);
  if (count) count->add(B, N, M);
}

}  // namespace sp::precision
