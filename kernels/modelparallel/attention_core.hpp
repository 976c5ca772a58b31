#pragma once
// Causal scaled dot-product attention over a rank's local heads (the part of
// self-attention between the column-parallel QKV and the row-parallel output
// projection, needing no communication: heads are independent).
//
// Layout: rows are tokens, row = sample * s + position. QKV is [n, 3 hl]
// with Q, K and V in column blocks [0, hl), [hl, 2 hl), [2 hl, 3 hl); local
// head j uses columns j d .. j d + d - 1 of each block. P and dS are
// [b * heads * s, s]: row (sample * heads + head) * s + query.
#include <Kokkos_Core.hpp>

#include "kernels/modelparallel/dense.hpp"

namespace sp::mp {

struct AttnShape {
  int b, s, heads, d;  // samples, sequence length, local heads, head size
  int hl() const { return heads * d; }
  double scale() const { return 1.0 / sp::kx::sqrt(static_cast<double>(d)); }
};

// Work item idx = (sample * heads + head) * s + position: its coordinates and
// the first columns of its head in the Q, K and V blocks.
struct AttnItem {
  int pos, head, smp, row, qc, kc, vc;
  KOKKOS_INLINE_FUNCTION AttnItem(int idx, int s, int heads, int d, int hl)
      : pos(idx % s), head((idx / s) % heads), smp(idx / (s * heads)), row(smp * s + pos), qc(head * d),
        kc(hl + head * d), vc(2 * hl + head * d) {}
};

// O = softmax(scale Q K^T + causal mask) V per head; P keeps the probabilities.
inline void attention_forward(const AttnShape& sh, CMat QKV, Mat O, Mat P) {
  const int s = sh.s, H = sh.heads, d = sh.d, hl = sh.hl();
  const double scale = sh.scale();
  Kokkos::parallel_for(
      "mp_attention_fwd", Kokkos::RangePolicy<>(0, sh.b * H * s), KOKKOS_LAMBDA(const int idx) {
        const AttnItem it(idx, s, H, d, hl);
        const int q = it.pos, head = it.head, smp = it.smp, rq = it.row, qc = it.qc, kc = it.kc, vc = it.vc;
        double mx = -1e308;
        for (int k = 0; k <= q; ++k) {
          double dot = 0;
          for (int e = 0; e < d; ++e) dot += QKV(rq, qc + e) * QKV(smp * s + k, kc + e);
          P(idx, k) = dot * scale;
          mx = sp::kx::max(mx, P(idx, k));
        }
        double den = 0;
        for (int k = 0; k <= q; ++k) {
          P(idx, k) = sp::kx::exp(P(idx, k) - mx);
          den += P(idx, k);
        }
        for (int k = 0; k < s; ++k) P(idx, k) = k <= q ? P(idx, k) / den : 0.0;
        for (int e = 0; e < d; ++e) {
          double o = 0;
          for (int k = 0; k <= q; ++k) o += P(idx, k) * QKV(smp * s + k, vc + e);
          O(rq, head * d + e) = o;
        }
      });
}

// Given dO, the gradient of QKV: dS = P (dP - rowsum(dP P)), dP = dO V^T;
// dQ = scale dS K, dK = scale dS^T Q, dV = P^T dO. dS is scratch like P.
inline void attention_backward(const AttnShape& sh, CMat QKV, CMat P, CMat dO, Mat dS, Mat dQKV) {
  const int s = sh.s, H = sh.heads, d = sh.d, hl = sh.hl();
  const double scale = sh.scale();
  Kokkos::parallel_for(
      "mp_attention_bwd_q", Kokkos::RangePolicy<>(0, sh.b * H * s), KOKKOS_LAMBDA(const int idx) {
        const AttnItem it(idx, s, H, d, hl);
        const int q = it.pos, head = it.head, smp = it.smp, rq = it.row, qc = it.qc, kc = it.kc, vc = it.vc;
        double c = 0;
        for (int k = 0; k <= q; ++k) {
          double dp = 0;
          for (int e = 0; e < d; ++e) dp += dO(rq, head * d + e) * QKV(smp * s + k, vc + e);
          dS(idx, k) = dp;
          c += dp * P(idx, k);
        }
        for (int k = 0; k < s; ++k) dS(idx, k) = k <= q ? P(idx, k) * (dS(idx, k) - c) : 0.0;
        for (int e = 0; e < d; ++e) {
          double g = 0;
          for (int k = 0; k <= q; ++k) g += dS(idx, k) * QKV(smp * s + k, kc + e);
          dQKV(rq, qc + e) = g * scale;
        }
      });
  Kokkos::parallel_for(
      "mp_attention_bwd_kv", Kokkos::RangePolicy<>(0, sh.b * H * s), KOKKOS_LAMBDA(const int idx) {
        const AttnItem it(idx, s, H, d, hl);
        const int k = it.pos, head = it.head, smp = it.smp, rk = it.row, base = (smp * H + head) * s;
        for (int e = 0; e < d; ++e) {
          double gk = 0, gv = 0;
          for (int q = k; q < s; ++q) {
            gk += dS(base + q, k) * QKV(smp * s + q, head * d + e);
            gv += P(base + q, k) * dO(smp * s + q, head * d + e);
          }
          dQKV(rk, hl + head * d + e) = gk * scale;
          dQKV(rk, 2 * hl + head * d + e) = gv;
        }
      });
}

}  // namespace sp::mp
