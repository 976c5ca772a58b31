#pragma once
// Single-rank reference of the transformer pieces the tensor-parallel layers
// implement (full weights, no splitting), in plain loops over bounded values
// (bounded.hpp): MLP Y = GeLU(X A) B and causal multi-head self-attention
// Y = concat_h(softmax(scale Q_h K_h^T) V_h) Wo with [Q K V] = X [Wq Wk Wv],
// forward and backward given the output gradient dY.
#include "reference/modelparallel/bounded.hpp"

namespace sp::reference {

struct MlpFwd {
  EbMat Z, H, Y;
};
struct MlpGrad {
  EbMat dX, dA, dB;
};

inline MlpFwd mlp_forward(const EbMat& X, const EbMat& A, const EbMat& B) {
  MlpFwd f;
  f.Z = matmul(X, false, A, false);
  f.H = EbMat(f.Z.r, f.Z.c);
  for (size_t i = 0; i < f.Z.a.size(); ++i) f.H.a[i] = gelu(f.Z.a[i]);
  f.Y = matmul(f.H, false, B, false);
  return f;
}

inline MlpGrad mlp_backward(const MlpFwd& f, const EbMat& X, const EbMat& A, const EbMat& B, const EbMat& dY) {
  MlpGrad g;
  g.dB = matmul(f.H, true, dY, false);
  EbMat dZ = matmul(dY, false, B, true);  // dH, then times GeLU'(Z) in place
  for (size_t i = 0; i < dZ.a.size(); ++i) dZ.a[i] = dZ.a[i] * gelu_grad(f.Z.a[i]);
  g.dA = matmul(X, true, dZ, false);
  g.dX = matmul(dZ, false, A, true);
  return g;
}

struct AttnDims {
  int b, s, heads, d;
};

struct AttnFwd {
  EbMat QKV, P, O, Y;  // P: [b * heads * s, s], row (sample * heads + head) * s + query
};
struct AttnGrad {
  EbMat dX, dWqkv, dWo;
};

// Wqkv = [Wq | Wk | Wv], [h, 3h]; Wo [h, h].
inline AttnFwd attention_forward(const AttnDims& a, const EbMat& X, const EbMat& Wqkv, const EbMat& Wo) {
  AttnFwd f;
  const int h = a.heads * a.d;
  const Eb scale = {1.0L / std::sqrt(static_cast<long double>(a.d)), gam(2) / std::sqrt(static_cast<long double>(a.d))};
  f.QKV = matmul(X, false, Wqkv, false);
  f.P = EbMat(a.b * a.heads * a.s, a.s);
  f.O = EbMat(a.b * a.s, h);
  for (int smp = 0; smp < a.b; ++smp)
    for (int hd = 0; hd < a.heads; ++hd)
      for (int q = 0; q < a.s; ++q) {
        const int row = (smp * a.heads + hd) * a.s + q, rq = smp * a.s + q;
        std::vector<Eb> S(q + 1);
        Eb mx{-1e300L, 0};
        for (int k = 0; k <= q; ++k) {
          EbDot dot;
          for (int e = 0; e < a.d; ++e) dot.add(f.QKV(rq, hd * a.d + e), f.QKV(smp * a.s + k, h + hd * a.d + e));
          S[k] = dot.finish() * scale;
          if (S[k].v > mx.v) mx.v = S[k].v;
          mx.e = std::max(mx.e, S[k].e);  // the computed maximum is some computed S
        }
        EbDot den;
        for (int k = 0; k <= q; ++k) {
          S[k] = exp(S[k] - mx);
          den.add(S[k], {1, 0});
        }
        const Eb sum = den.finish();
        for (int k = 0; k <= q; ++k) f.P(row, k) = S[k] / sum;
        for (int e = 0; e < a.d; ++e) {
          EbDot o;
          for (int k = 0; k <= q; ++k) o.add(f.P(row, k), f.QKV(smp * a.s + k, 2 * h + hd * a.d + e));
          f.O(rq, hd * a.d + e) = o.finish();
        }
      }
  f.Y = matmul(f.O, false, Wo, false);
  return f;
}

inline AttnGrad attention_backward(const AttnDims& a, const AttnFwd& f, const EbMat& X, const EbMat& Wqkv,
                                   const EbMat& Wo, const EbMat& dY) {
  AttnGrad g;
  const int h = a.heads * a.d;
  const Eb scale = {1.0L / std::sqrt(static_cast<long double>(a.d)), gam(2) / std::sqrt(static_cast<long double>(a.d))};
  g.dWo = matmul(f.O, true, dY, false);
  const EbMat dO = matmul(dY, false, Wo, true);
  EbMat dS(f.P.r, f.P.c), dQKV(f.QKV.r, f.QKV.c);
  for (int smp = 0; smp < a.b; ++smp)
    for (int hd = 0; hd < a.heads; ++hd) {
      const int base = (smp * a.heads + hd) * a.s;
      for (int q = 0; q < a.s; ++q) {
        const int rq = smp * a.s + q;
        std::vector<Eb> dP(q + 1);
        EbDot c;
        for (int k = 0; k <= q; ++k) {
          EbDot dp;
          for (int e = 0; e < a.d; ++e) dp.add(dO(rq, hd * a.d + e), f.QKV(smp * a.s + k, 2 * h + hd * a.d + e));
          dP[k] = dp.finish();
          c.add(dP[k], f.P(base + q, k));
        }
        const Eb cs = c.finish();
        for (int k = 0; k <= q; ++k) dS(base + q, k) = f.P(base + q, k) * (dP[k] - cs);
        for (int e = 0; e < a.d; ++e) {
          EbDot dq;
          for (int k = 0; k <= q; ++k) dq.add(dS(base + q, k), f.QKV(smp * a.s + k, h + hd * a.d + e));
          dQKV(rq, hd * a.d + e) = dq.finish() * scale;
        }
      }
      for (int k = 0; k < a.s; ++k)
        for (int e = 0; e < a.d; ++e) {
          EbDot dk, dv;
          for (int q = k; q < a.s; ++q) {
            dk.add(dS(base + q, k), f.QKV(smp * a.s + q, hd * a.d + e));
            dv.add(f.P(base + q, k), dO(smp * a.s + q, hd * a.d + e));
          }
          dQKV(smp * a.s + k, h + hd * a.d + e) = dk.finish() * scale;
          dQKV(smp * a.s + k, 2 * h + hd * a.d + e) = dv.finish();
        }
    }
  g.dWqkv = matmul(X, true, dQKV, false);
  g.dX = matmul(dQKV, false, Wqkv, true);  // one dot of length 3h: the Q, K and V parts summed in any order
  return g;
}

}  // namespace sp::reference
