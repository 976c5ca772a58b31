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
//
// Storage type S: fp32 or fp64 compute in S; 16-bit S (fp16, bf16) forms
// every product in fp32 (kernels/gemm's tiled GEMM with 16-bit operands) and
// rounds each result once into S, and the softmax computes in fp32
// (kernels/nn/softmax.hpp): Q K^T, P, O, dP, dS, dQ, dK, dV are S buffers.
#include <Kokkos_Core.hpp>
#include <string>
#include <type_traits>

#include "kernels/modelparallel/dense.hpp"
#include "kernels/nn/activations.hpp"
#include "kernels/nn/softmax.hpp"
#include "scaleproof/kokkos_compat.hpp"

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

// C_b = op(A_b) op(B_b) for b < batch: nn::gemm_batched for fp32 and fp64;
// for 16-bit S the tiled GEMM accumulates in fp32 into a temporary, which is
// then rounded once into C's storage.
template <class S>
SP_UNIT_LOCAL void batched(int batch, int M, int N, int K, sp::nn::Batched<const S> A, sp::nn::Batched<const S> B,
                           sp::nn::Batched<S> C) {
  using Acc = typename sp::nn::AccOf<S>::type;
  if constexpr (std::is_same<S, Acc>::value) {
    sp::nn::gemm_batched<S>(batch, M, N, K, A, B, C);
  } else {
    auto as = sp::nn::operand(A.p, A.ld, A.op), bs = sp::nn::operand(B.p, B.ld, B.op);
    as.bs = A.bs, as.bh = A.bh, as.nh = A.nh;
    bs.bs = B.bs, bs.bh = B.bh, bs.nh = B.nh;
    const int64_t mn = int64_t(M) * N;
    Kokkos::View<Acc*> acc(Kokkos::view_alloc(std::string("mp_attention_acc"), Kokkos::WithoutInitializing),
                           size_t(batch) * size_t(mn));
    sp::kernels::GemmOperand<Acc> cs{acc.data(), N, 1, mn};
    sp::kernels::gemm_tiled_batched<Acc, S, S>(batch, M, N, K, as, bs, cs);
    if constexpr (sp::nn::kHostMemory) {  // a row per iteration: no index division per element
      Kokkos::parallel_for(
          "mp_attention_store", Kokkos::RangePolicy<>(0, int64_t(batch) * M), KOKKOS_LAMBDA(const int64_t row) {
            const int64_t b = row / M, i = row % M;
            S* c = C.p + (b / C.nh) * C.bs + (b % C.nh) * C.bh + i * C.ld;
            const Acc* a = acc.data() + row * N;
            for (int j = 0; j < N; ++j) c[j] = sp::nn::store_as<S>(a[j], 0);
          });
    } else {
      Kokkos::parallel_for(
          "mp_attention_store", Kokkos::RangePolicy<>(0, int64_t(batch) * mn), KOKKOS_LAMBDA(const int64_t idx) {
            const int64_t b = idx / mn, i = (idx % mn) / N, j = idx % N;
            S* c = C.p + (b / C.nh) * C.bs + (b % C.nh) * C.bh;
            c[i * C.ld + j] = sp::nn::store_as<S>(acc(idx), 0);
          });
    }
  }
}
}  // namespace detail

// O = softmax(scale Q K^T + causal mask) V per head; P keeps the probabilities.
// On raw buffers of storage type T: qkv [n, 3 hl], o [n, hl], p [b heads s, s].
template <class T>
void attention_forward(const AttnShape& sh, const T* qkv, T* o, T* p) {
  using sp::nn::Op;
  using detail::head_cols, detail::probs;
  const int s = sh.s, d = sh.d, hl = sh.hl(), batch = sh.b * sh.heads;
  detail::batched<T>(batch, s, s, d, head_cols(qkv, sh, 3 * hl, 0, Op::N), head_cols(qkv, sh, 3 * hl, hl, Op::T),
                     probs(p, sh, Op::N));
  sp::nn::softmax_forward<T>({batch * s, s, s, s}, p, typename sp::nn::AccOf<T>::type(sh.scale()));
  detail::batched<T>(batch, s, d, s, probs<const T>(p, sh, Op::N), head_cols(qkv, sh, 3 * hl, 2 * hl, Op::N),
                     head_cols(o, sh, hl, 0, Op::N));
}
inline void attention_forward(const AttnShape& sh, CMat QKV, Mat O, Mat P) {
  attention_forward<double>(sh, QKV.data(), O.data(), P.data());
}

// Given dO, the gradient of QKV: dS = P (dP - rowsum(dP P)), dP = dO V^T;
// dQ = scale dS K, dK = scale dS^T Q, dV = P^T dO. dS is scratch like P.
template <class T>
SP_UNIT_LOCAL void attention_backward(const AttnShape& sh, const T* qkv, const T* P, const T* dO, T* dS, T* g) {
  using sp::nn::Op;
  using detail::head_cols, detail::probs;
  const int s = sh.s, d = sh.d, hl = sh.hl(), batch = sh.b * sh.heads;
  detail::batched<T>(batch, s, s, d, head_cols(dO, sh, hl, 0, Op::N), head_cols(qkv, sh, 3 * hl, 2 * hl, Op::T),
                     probs(dS, sh, Op::N));
  sp::nn::softmax_backward<T>({batch * s, s, s, s}, P, dS);
  const T* ds = dS;
  detail::batched<T>(batch, s, d, s, probs(ds, sh, Op::N), head_cols(qkv, sh, 3 * hl, hl, Op::N),
                     head_cols(g, sh, 3 * hl, 0, Op::N));
  detail::batched<T>(batch, s, d, s, probs(ds, sh, Op::T), head_cols(qkv, sh, 3 * hl, 0, Op::N),
                     head_cols(g, sh, 3 * hl, hl, Op::N));
  detail::batched<T>(batch, s, d, s, probs(P, sh, Op::T), head_cols(dO, sh, hl, 0, Op::N),
                     head_cols(g, sh, 3 * hl, 2 * hl, Op::N));
  // The scale of the scores enters dQ and dK after their sums.
  const int n = sh.b * s, w = 2 * hl;
  using A = typename sp::nn::AccOf<T>::type;
  const A a = A(sh.scale());
  if constexpr (sp::nn::kHostMemory) {  // a row per iteration: no index division per element
    Kokkos::parallel_for(
        "mp_attention_scale", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(const int r) {
          T* x = g + int64_t(r) * 3 * hl;
          for (int c = 0; c < w; ++c) x[c] = sp::nn::store_as<T>(sp::nn::load(x[c]) * a, 0);
        });
  } else {
    Kokkos::parallel_for(
        "mp_attention_scale", Kokkos::RangePolicy<>(0, n * w), KOKKOS_LAMBDA(const int idx) {
          T& x = g[int64_t(idx / w) * 3 * hl + idx % w];
          x = sp::nn::store_as<T>(sp::nn::load(x) * a, 0);
        });
  }
}
inline void attention_backward(const AttnShape& sh, CMat QKV, CMat P, CMat dO, Mat dS, Mat dQKV) {
  attention_backward<double>(sh, QKV.data(), P.data(), dO.data(), dS.data(), dQKV.data());
}

}  // namespace sp::mp
