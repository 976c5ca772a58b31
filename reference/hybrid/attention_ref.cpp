// The attention reference of attention_ref.hpp.
#include "reference/hybrid/attention_ref.hpp"

#include <vector>

namespace sp::hybrid::ref {

namespace {
E f(R x) { return exact(x); }
}  // namespace

Attn attn_forward(const AttnDims& D, const Matrix& Q, const Matrix& K, const Matrix& V) {
  const R scale = D.scale;
  Attn a{Matrix(D.B * D.H * D.s, D.s), Matrix(D.B * D.s, D.h)};
  for (int b = 0; b < D.B; ++b)
    for (int hd = 0; hd < D.H; ++hd)
      for (int q = 0; q < D.s; ++q) {
        const int row = (b * D.H + hd) * D.s + q, tq = b * D.s + q;
        std::vector<E> x(size_t(q) + 1);
        E mx{};
        for (int k = 0; k <= q; ++k) {
          Dot dd;
          for (int c = 0; c < D.d; ++c) dd.add(Q(tq, hd * D.d + c), K(b * D.s + k, hd * D.d + c));
          x[size_t(k)] = dd.finish() * f(scale);
          mx = k == 0 ? x[0] : max(mx, x[size_t(k)]);
        }
        E den{};
        for (int k = 0; k <= q; ++k) {
          x[size_t(k)] = exp(x[size_t(k)] - mx);
          den = den + x[size_t(k)];
        }
        for (int k = 0; k < D.s; ++k) a.P(row, k) = k <= q ? x[size_t(k)] / den : E{};
        for (int c = 0; c < D.d; ++c) {
          Dot o;
          for (int k = 0; k < D.s; ++k) o.add(a.P(row, k), V(b * D.s + k, hd * D.d + c));
          a.O(tq, hd * D.d + c) = o.finish();
        }
      }
  return a;
}
void attn_backward(const AttnDims& D, const Matrix& Q, const Matrix& K, const Matrix& V, const Attn& a,
                   const Matrix& dO, Matrix& dQ, Matrix& dK, Matrix& dV) {
  const R scale = D.scale;
  dQ = Matrix(D.B * D.s, D.h), dK = Matrix(D.B * D.s, D.h), dV = Matrix(D.B * D.s, D.h);
  Matrix dS(D.B * D.H * D.s, D.s);
  for (int b = 0; b < D.B; ++b)
    for (int hd = 0; hd < D.H; ++hd) {
      for (int q = 0; q < D.s; ++q) {
        const int row = (b * D.H + hd) * D.s + q;
        std::vector<E> g(size_t(D.s));
        for (int k = 0; k < D.s; ++k) {
          Dot dd;
          for (int c = 0; c < D.d; ++c) dd.add(dO(b * D.s + q, hd * D.d + c), V(b * D.s + k, hd * D.d + c));
          g[size_t(k)] = dd.finish();
        }
        E cs{};
        for (int k = 0; k <= q; ++k) cs = cs + g[size_t(k)] * a.P(row, k);
        for (int k = 0; k < D.s; ++k) dS(row, k) = k <= q ? a.P(row, k) * (g[size_t(k)] - cs) : E{};
      }
      for (int i = 0; i < D.s; ++i)
        for (int c = 0; c < D.d; ++c) {
          Dot q, k, v;
          for (int j = 0; j < D.s; ++j) {
            const int ri = (b * D.H + hd) * D.s + i, rj = (b * D.H + hd) * D.s + j;
            q.add(dS(ri, j), K(b * D.s + j, hd * D.d + c));
            k.add(dS(rj, i), Q(b * D.s + j, hd * D.d + c));
            v.add(a.P(rj, i), dO(b * D.s + j, hd * D.d + c));
          }
          dQ(b * D.s + i, hd * D.d + c) = q.finish() * f(scale);
          dK(b * D.s + i, hd * D.d + c) = k.finish() * f(scale);
          dV(b * D.s + i, hd * D.d + c) = v.finish();
        }
    }
}

}  // namespace sp::hybrid::ref
