#pragma once
// Causal multi-head attention between the projections, in plain loops over
// values that carry their running error bound (eb.hpp): per (sample, head),
// P = softmax(scale Q K^T + causal mask), O = P V, and its backward given
// dO. The hybrid step's reference (hybrid_ref.cpp) runs it inside every
// block; the step's attention core alone (technique step_attention) is
// checked against it directly.
#include "reference/hybrid/hybrid_ref.hpp"

namespace sp::hybrid::ref {

struct AttnDims {
  int B, s, h, H, d;  // samples, sequence length, width H d, heads, head size
  R scale;            // 1 / sqrt(d) as the kernel rounds it into its type
};

// Q, K, V, O are [B s, h] (head j: columns j d .. j d + d - 1).
struct Attn {
  Matrix P;  // [(b H + j) s + q, k]; entries with k > q are exactly 0
  Matrix O;  // [B s, h]
};
Attn attn_forward(const AttnDims& D, const Matrix& Q, const Matrix& K, const Matrix& V);
// dQ, dK, dV from dO, with P taken from `a`.
void attn_backward(const AttnDims& D, const Matrix& Q, const Matrix& K, const Matrix& V, const Attn& a,
                   const Matrix& dO, Matrix& dQ, Matrix& dK, Matrix& dV);

}  // namespace sp::hybrid::ref
