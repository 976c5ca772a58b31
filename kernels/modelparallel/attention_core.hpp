#pragma once
// Causal scaled dot-product attention over a rank's local heads (the part of
// self-attention between the column-parallel QKV and the row-parallel output
// projection, needing no communication: heads are independent), as batched
// GEMMs over (sample, head) and a row softmax (kernels/nn).
//
// Layout: rows are tokens, row = sample * s + position. QKV is [n, 3 hl]
// with Q, K and V in column blocks [0, hl), [hl, 2 hl), [2 hl, 3 hl); local
// head j uses columns j d .. j d + d - 1 of each block. P and dS are
// [b * heads * s, s]: row (sample * heads + head) * s + query. Masked
// entries (key > query) of P and dS are exactly 0, so the full s x s
// products add only exact zeros to the causal sums.
#include <Kokkos_Core.hpp>

#include "kernels/modelparallel/dense.hpp"
#include "kernels/nn/activations.hpp"
#include "kernels/nn/softmax.hpp"

namespace sp::mp {

struct AttnShape {
  int b, s, heads, d;  // samples, sequence length, local heads, head size
  int hl() const { return heads * d; }
  double scale() const { return 1.0 / sp::kx::sqrt(static_cast<double>(d)); }
};

namespace detail {
// Matrix (sample, head) of the batch: a head's d columns of the block at
// column c0 of a [b s, ld] activation, or a whole [s, s] block of P / dS.
template <class T>
sp::nn::Batched<T> head_cols(T* base, const AttnShape& sh, int64_t ld, int c0, sp::nn::Op op) {
  return {base + c0, ld, op, int64_t(sh.s) * ld, sh.d, sh.heads};
}
template <class T>
sp::nn::Batched<T> probs(T* base, const AttnShape& sh, sp::nn::Op op) {
  return {base, sh.s, op, int64_t(sh.s) * sh.s};
}
}  // namespace detail

// O = softmax(scale Q K^T + causal mask) V per head; P keeps the probabilities.
// On raw buffers of any floating type T (computed in T): qkv [n, 3 hl], o [n, hl],
// p [b heads s, s].
template <class T>
void attention_forward(const AttnShape& sh, const T* qkv, T* o, T* p) {
  using sp::nn::Op;
  using detail::head_cols, detail::probs;
  const int s = sh.s, d = sh.d, hl = sh.hl(), batch = sh.b * sh.heads;
  sp::nn::gemm_batched<T>(batch, s, s, d, head_cols(qkv, sh, 3 * hl, 0, Op::N), head_cols(qkv, sh, 3 * hl, hl, Op::T),
                          probs(p, sh, Op::N));
  sp::nn::softmax_forward<T>({batch * s, s, s, s}, p, T(sh.scale()));
  sp::nn::gemm_batched<T>(batch, s, d, s, probs<const T>(p, sh, Op::N), head_cols(qkv, sh, 3 * hl, 2 * hl, Op::N),
                          head_cols(o, sh, hl, 0, Op::N));
}
inline void attention_forward(const AttnShape& sh, CMat QKV, Mat O, Mat P) {
  attention_forward<double>(sh, QKV.data(), O.data(), P.data());
}

// Given dO, the gradient of QKV: dS = P (dP - rowsum(dP P)), dP = dO V^T;
// dQ = scale dS K, dK = scale dS^T Q, dV = P^T dO. dS is scratch like P.
template <class T>
void attention_backward(const AttnShape& sh, const T* qkv, const T* P, const T* dO, T* dS, T* g) {
  using sp::nn::Op;
  using detail::head_cols, detail::probs;
  const int s = sh.s, d = sh.d, hl = sh.hl(), batch = sh.b * sh.heads;
  sp::nn::gemm_batched<T>(batch, s, s, d, head_cols(dO, sh, hl, 0, Op::N), head_cols(qkv, sh, 3 * hl, 2 * hl, Op::T),
                          probs(dS, sh, Op::N));
  sp::nn::softmax_backward<T>({batch * s, s, s, s}, P, dS);
  const T* ds = dS;
  sp::nn::gemm_batched<T>(batch, s, d, s, probs(ds, sh, Op::N), head_cols(qkv, sh, 3 * hl, hl, Op::N),
                          head_cols(g, sh, 3 * hl, 0, Op::N));
  sp::nn::gemm_batched<T>(batch, s, d, s, probs(ds, sh, Op::T), head_cols(qkv, sh, 3 * hl, 0, Op::N),
                          head_cols(g, sh, 3 * hl, hl, Op::N));
  sp::nn::gemm_batched<T>(batch, s, d, s, probs(P, sh, Op::T), head_cols(dO, sh, hl, 0, Op::N),
                          head_cols(g, sh, 3 * hl, 2 * hl, Op::N));
  // The scale of the scores enters dQ and dK after their sums.
  const int n = sh.b * s, w = 2 * hl;
  const T a = T(sh.scale());
  Kokkos::parallel_for(
      "mp_attention_scale", Kokkos::RangePolicy<>(0, n * w),
      KOKKOS_LAMBDA(const int idx) { g[int64_t(idx / w) * 3 * hl + idx % w] *= a; });
}
inline void attention_backward(const AttnShape& sh, CMat QKV, CMat P, CMat dO, Mat dS, Mat dQKV) {
  attention_backward<double>(sh, QKV.data(), P.data(), dO.data(), dS.data(), dQKV.data());
}

}  // namespace sp::mp
