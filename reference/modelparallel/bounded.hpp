#pragma once
// Plain-loop reference arithmetic that carries, with every value, a bound on
// how far an fp64 kernel's result may lie from it (Wilkinson's running error
// analysis). Values are long double; each bound propagates the inputs'
// bounds to first order plus the fp64 rounding of the operation itself:
//  - dot products of length K in ANY summation order (so the split of a sum
//    over tensor-parallel ranks and the ring all-reduce's order are covered):
//    |fl(sum a b) - sum a b| <= gamma_K sum |a||b| (Higham, eq. 3.5), applied
//    to the perturbed inputs;
//  - + - * /: one rounding, u |result| (Higham, eq. 2.4);
//  - tanh and exp: within 2 ulp (4u relative): the kernels' own fp64 tanh
//    (kernels/nn/tanh_f64.hpp) is derived and tested to that bound, the
//    library's tanh and exp (glibc documents 2 ulp for tanh and 1 for exp)
//    are within it;
//  - GeLU and GeLU': mean-value bounds with max |GeLU'| < 1.13 and
//    max |GeLU''| < 0.8 (checked by a unit test), plus their evaluation error
//    derived in gelu_eval_error().
// The long double reference's own rounding (2^-64 relative) is added to every
// dot product bound, so the bounds are rigorous, not "tolerances".
#include <cmath>
#include <vector>

namespace sp::reference {

constexpr long double kU = 0x1p-53L;   // fp64 unit roundoff
constexpr long double kUl = 0x1p-63L;  // long double (x87) unit roundoff, per operation

inline long double gam(long double n, long double u = kU) { return n * u / (1 - n * u); }

struct Eb {
  long double v = 0, e = 0;  // value, bound on |fp64 result - v|
};

struct EbMat {
  int r = 0, c = 0;
  std::vector<Eb> a;
  EbMat() = default;
  EbMat(int rows, int cols) : r(rows), c(cols), a(static_cast<size_t>(rows) * cols) {}
  Eb& operator()(int i, int j) { return a[static_cast<size_t>(i) * c + j]; }
  const Eb& operator()(int i, int j) const { return a[static_cast<size_t>(i) * c + j]; }
};

inline EbMat exact(const std::vector<double>& x, int rows, int cols) {
  EbMat m(rows, cols);
  for (size_t i = 0; i < x.size(); ++i) m.a[i].v = x[i];
  return m;
}

// One rounding of an operation whose exact result (from perturbed inputs) is within e of v.
inline Eb rounded(long double v, long double e) { return {v, e + kU * (std::fabs(v) + e)}; }

inline Eb operator+(Eb x, Eb y) { return rounded(x.v + y.v, x.e + y.e); }
inline Eb operator-(Eb x, Eb y) { return rounded(x.v - y.v, x.e + y.e); }
inline Eb operator*(Eb x, Eb y) { return rounded(x.v * y.v, std::fabs(x.v) * y.e + x.e * std::fabs(y.v) + x.e * y.e); }
inline Eb operator/(Eb x, Eb y) {  // needs |y.v| > y.e
  const long double ay = std::fabs(y.v);
  return rounded(x.v / y.v, (x.e * ay + std::fabs(x.v) * y.e) / (ay * (ay - y.e)));
}

// Accumulates sum_k a_k b_k; finish() gives the value and its bound.
struct EbDot {
  long double s = 0, prop = 0, mag = 0;
  long double n = 0;
  void add(Eb a, Eb b) {
    s += a.v * b.v;
    prop += std::fabs(a.v) * b.e + a.e * std::fabs(b.v) + a.e * b.e;
    mag += (std::fabs(a.v) + a.e) * (std::fabs(b.v) + b.e);
    n += 1;
  }
  Eb finish() const { return {s, prop + gam(n) * mag + gam(2 * n, kUl) * mag}; }
};

// op(A) op(B) with bounds, op = transpose when the flag is set.
inline EbMat matmul(const EbMat& A, bool ta, const EbMat& B, bool tb) {
  const int M = ta ? A.c : A.r, K = ta ? A.r : A.c, N = tb ? B.r : B.c;
  EbMat C(M, N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      EbDot d;
      for (int k = 0; k < K; ++k) d.add(ta ? A(k, i) : A(i, k), tb ? B(j, k) : B(k, j));
      C(i, j) = d.finish();
    }
  return C;
}

inline EbMat add(const EbMat& A, const EbMat& B) {
  EbMat C(A.r, A.c);
  for (size_t i = 0; i < A.a.size(); ++i) C.a[i] = A.a[i] + B.a[i];
  return C;
}

// [A | B | ...] side by side; and columns [c0, c0 + n) of A.
inline EbMat concat_cols(const std::vector<const EbMat*>& parts) {
  int cols = 0;
  for (auto* p : parts) cols += p->c;
  EbMat C(parts.front()->r, cols);
  int c0 = 0;
  for (auto* p : parts) {
    for (int i = 0; i < p->r; ++i)
      for (int j = 0; j < p->c; ++j) C(i, c0 + j) = (*p)(i, j);
    c0 += p->c;
  }
  return C;
}
inline EbMat cols(const EbMat& A, int c0, int n) {
  EbMat C(A.r, n);
  for (int i = 0; i < A.r; ++i)
    for (int j = 0; j < n; ++j) C(i, j) = A(i, c0 + j);
  return C;
}

// GeLU (tanh form) and its derivative in long double, with bounds.
constexpr long double kGc = 0.7978845608028654L, kGa = 0.044715L;
constexpr long double kGeluLip = 1.13L, kGeluGradLip = 0.8L;  // max |GeLU'|, max |GeLU''|

// Error of evaluating the kernel's formulas at an exactly known fp64 x:
// s = c (x + a x^3) takes <= 6 roundings with no cancellation (x and a x^3
// share a sign): |ds| <= gamma_6 |s|; tanh adds 4u and is 1-Lipschitz:
// |dt| <= gamma_6 |s| + 4u. GeLU = 0.5 x (1 + t): two more roundings,
// <= 0.5 |x| (|dt| + 6u). GeLU' = 0.5 (1 + t) + f (1 - t^2) with
// f = 0.5 x c (1 + 3 a x^2) (<= 6 roundings, gamma_6 |f|):
// <= 0.5 (|dt| + 2u) + |f| (2 |dt| + 3u) + gamma_6 |f| + u (1 + 2 |f|).
inline long double gelu_dt(long double x) {
  const long double s = kGc * (std::fabs(x) + kGa * std::fabs(x * x * x));
  return gam(6) * s + 4 * kU;
}
inline Eb gelu(Eb z) {
  const long double x = z.v, t = std::tanh(kGc * (x + kGa * x * x * x));
  const long double xm = std::fabs(x) + z.e;  // evaluation happens at the perturbed input
  return {0.5L * x * (1 + t), kGeluLip * z.e + 0.5L * xm * (gelu_dt(xm) + 6 * kU)};
}
inline Eb gelu_grad(Eb z) {
  const long double x = z.v, t = std::tanh(kGc * (x + kGa * x * x * x));
  const long double f = 0.5L * x * kGc * (1 + 3 * kGa * x * x);
  const long double xm = std::fabs(x) + z.e;
  const long double fm = 0.5L * xm * kGc * (1 + 3 * kGa * xm * xm), dt = gelu_dt(xm);
  const long double eval = 0.5L * (dt + 2 * kU) + fm * (2 * dt + 3 * kU) + gam(6) * fm + kU * (1 + 2 * fm);
  return {0.5L * (1 + t) + f * (1 - t * t), kGeluGradLip * z.e + eval};
}

// exp at a perturbed argument: |exp(x^) - exp(x)| <= exp(x) (e^e - 1), then 2 ulp.
inline Eb exp(Eb x) {
  const long double v = std::exp(x.v), prop = v * std::expm1(x.e);
  return {v, prop + 4 * kU * (v + prop)};
}

}  // namespace sp::reference
