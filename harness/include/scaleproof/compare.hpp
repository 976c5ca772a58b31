#pragma once
// Element-wise comparison of a kernel's output with a reference, each element
// against its own error bound. Shared by every technique's check().
#include <cmath>
#include <cstddef>
#include <string>

#include "scaleproof/technique.hpp"

namespace sp {

// Unit roundoff u of a type (half the machine epsilon: rounding to nearest).
template <class T>
constexpr double unit_roundoff();
template <>
constexpr double unit_roundoff<float>() {
  return 0x1p-24;
}
template <>
constexpr double unit_roundoff<double>() {
  return 0x1p-53;
}

// Higham's gamma_n = n u / (1 - n u): the relative bound on a length-n
// recursive sum or dot product (Accuracy and Stability of Numerical
// Algorithms, 2nd ed., Lemma 3.1 and eq. 3.5).
inline double gamma_n(double n, double u) {
  const double nu = n * u;
  return nu < 1 ? nu / (1 - nu) : INFINITY;
}

// Accumulates one element at a time: got vs want with |got - want| <= bound.
class Comparator {
 public:
  explicit Comparator(std::string rule) { r_.bound_rule = std::move(rule); }
  void add(double got, double want, double bound) {
    const double err = std::fabs(got - want);
    ++r_.checked;
    // NaN in got fails (the comparison below is false for NaN).
    if (!(err <= bound)) ++r_.wrong;
    if (err > r_.max_abs_err || std::isnan(err)) r_.max_abs_err = err;
    const double rel = want != 0 ? err / std::fabs(want) : (err == 0 ? 0 : INFINITY);
    if (rel > r_.max_rel_err) r_.max_rel_err = rel;
    if (bound > r_.max_bound) r_.max_bound = bound;
  }
  const CheckResult& result() const { return r_; }

 private:
  CheckResult r_;
};

}  // namespace sp
