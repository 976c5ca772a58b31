#pragma once
// Running error analysis for a computation in fp32 or fp64 (Wilkinson; Higham,
// Accuracy and Stability, 2nd ed., sec. 3.1-3.3): a value computed in long
// double plain arithmetic carries e >= |fp32 kernel's value - this value|.
// Each operation propagates its inputs' bounds exactly to all orders and
// adds its own rounding, u |result|, with u = the kernel's unit roundoff
// (2^-24 fp32, 2^-53 fp64) + 2^-63 (this reference's own long double
// rounding), set with set_unit_roundoff() before a computation:
//  - + - * /: one rounding (a fused multiply-add only rounds less);
//  - sqrt: correctly rounded; |sqrt(a) - sqrt(b)| <= |a-b| / (sqrt a + sqrt b);
//  - exp: |exp(x^) - exp(x)| <= exp(x) expm1(e), evaluation within 2 ulp (4u);
//  - tanh: 1-Lipschitz, evaluation within 2 ulp (4u);
//  - a dot product of K terms in ANY order and split (tensor-parallel
//    partial sums, micro-batch accumulation, all-reduce):
//    gamma_K sum |a||b| for its rounding (Higham eq. 3.5).
// An operation whose bound makes its result undefined (dividing by a value
// whose bound reaches zero) returns an infinite bound.
#include <cmath>
#include <limits>

namespace sp::hybrid::ref {

using R = long double;
inline R& unit_ref() {
  static R u = 0x1p-24L + 0x1p-63L;
  return u;
}
inline R unit() { return unit_ref(); }
inline void set_unit_roundoff(double kernel_u) { unit_ref() = R(kernel_u) + 0x1p-63L; }
inline R gam(R n) { return n * unit() < 1 ? n * unit() / (1 - n * unit()) : std::numeric_limits<R>::infinity(); }

struct E {
  R v = 0, e = 0;
};

inline E rounded(R v, R e) { return {v, e + unit() * (std::fabs(v) + e)}; }
inline E operator+(E x, E y) { return rounded(x.v + y.v, x.e + y.e); }
inline E operator-(E x, E y) { return rounded(x.v - y.v, x.e + y.e); }
inline E operator*(E x, E y) { return rounded(x.v * y.v, std::fabs(x.v) * y.e + x.e * std::fabs(y.v) + x.e * y.e); }
inline E operator/(E x, E y) {
  const R ay = std::fabs(y.v);
  if (!(ay > y.e)) return {x.v / y.v, std::numeric_limits<R>::infinity()};
  return rounded(x.v / y.v, (x.e * ay + std::fabs(x.v) * y.e) / (ay * (ay - y.e)));
}
inline E sqrt(E x) {
  if (!(x.v > x.e)) return {std::sqrt(std::fabs(x.v)), std::numeric_limits<R>::infinity()};
  const R s = std::sqrt(x.v);
  return rounded(s, x.e / (s + std::sqrt(x.v - x.e)));
}
inline E exp(E x) {
  const R v = std::exp(x.v), prop = v * std::expm1(x.e);
  return {v, prop + 4 * unit() * (v + prop)};
}
inline E tanh(E x) {
  const R v = std::tanh(x.v), prop = std::fmin(x.e, R(2));
  return {v, prop + 4 * unit() * (std::fabs(v) + prop)};
}
inline E max(E x, E y) { return {std::fmax(x.v, y.v), std::fmax(x.e, y.e)}; }
inline E exact(R v) { return {v, 0}; }

// sum_k a_k b_k in any order; finish() gives the value and its bound.
struct Dot {
  R s = 0, prop = 0, mag = 0, n = 0;
  void add(E a, E b) {
    s += a.v * b.v;
    prop += std::fabs(a.v) * b.e + a.e * std::fabs(b.v) + a.e * b.e;
    mag += (std::fabs(a.v) + a.e) * (std::fabs(b.v) + b.e);
    n += 1;
  }
  E finish() const { return {s, prop + gam(n) * mag}; }
};

}  // namespace sp::hybrid::ref
