#pragma once
// tanh of a double without a library call and without branches, so that the
// host compiler inlines and vectorises the element-wise passes of the fp64
// layers (GeLU runs one tanh per activation element, forward and backward).
//
// What holds: |tanh_f64(x) - tanh(x)| <= 4u |tanh(x)| with u = 2^-53, the
// "2 ulp" that the fp64 references assume for the library's tanh
// (reference/modelparallel/bounded.hpp); NaN gives x, +-inf gives +-1,
// -0 gives -0. Checked against long double on a dense sweep by a unit test.
// Why, for c = min(|x|, 20) (tanh(20) rounds to 1):
//   e^(2c) - 1 = 2^n (e^r - 1) + (2^n - 1), n = floor(2c log2(e)) in [0, 57],
//   r = 2c - n ln2 in [0, ln2) (up to the rounding of n near a boundary,
//   where r leaves the interval by a few ulps and nothing below changes).
//   r is exact to first order: n ln2_hi is exact (ln2_hi has 32 significant
//   bits) and 2c - n ln2_hi is exact (Sterbenz), leaving one rounding in the
//   tiny n ln2_lo term.
//   e^r - 1 = r + r^2 s(r), s(r) = sum_k r^k/(k+2)! to r^15 (remainder below
//   2e-19 relative); s has positive terms led by 1/2, so its Horner error is
//   about 1.6u; one fma gives e^r - 1 within u + 0.31 (2.6u) < 1.9u, since
//   r^2 s <= 0.31 (e^r - 1) on [0, ln2).
//   All terms are positive: E = fma(2^n, e^r - 1, 2^n - 1) is within
//   1.9u + u. tanh(c) = E / (E + 2): E's error enters scaled by
//   2 / (E + 2) <= 1 (<= 2/3 where n >= 1, E >= 1), plus one rounding for the
//   sum and one for the quotient: at most 1.9u + 2u (n = 0) and
//   2/3 (2.9u) + 2u (n >= 1), both below 4u.
// The clamp, the floor (adding 1.5 2^52) and the NaN select are integer or
// exact operations, so the loop has no branch and nothing that can trap.
// The analysis needs fused multiply-adds: without them (and in a CUDA
// compilation) the library's tanh is used, whose error the same bound
// assumes.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>

namespace sp::nn {

KOKKOS_INLINE_FUNCTION double tanh_f64(double x) {
#if defined(__CUDA_ARCH__) || defined(__NVCC__) || !defined(__FMA__)
  return std::tanh(x);
#else
  constexpr std::uint64_t kSign = 0x8000000000000000ull, kTwenty = 0x4034000000000000ull;  // 20.0
  constexpr double kMagic = 6755399441055744.0;                                            // 1.5 2^52
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln2 to 32 bits (low 21 bits zero)
  constexpr double kLn2Lo = 1.90821492927058770002e-10;  // ln2 - kLn2Hi
  const std::uint64_t ux = __builtin_bit_cast(std::uint64_t, x), ua = ux & ~kSign;
  const std::uint64_t uc = ua < kTwenty ? ua : kTwenty;  // min(|x|, 20); NaN too
  const double c2 = 2.0 * __builtin_bit_cast(double, uc);
  const double shifted = (c2 * 1.4426950408889634 - 0.5) + kMagic;  // floor(2c log2 e) + 1.5 2^52
  const double n = shifted - kMagic;
  const double r = __builtin_fma(-n, kLn2Lo, __builtin_fma(-n, kLn2Hi, c2));
  double s = 1.0 / 355687428096000.0;  // 1/17!
  s = __builtin_fma(s, r, 1.0 / 20922789888000.0);
  s = __builtin_fma(s, r, 1.0 / 1307674368000.0);
  s = __builtin_fma(s, r, 1.0 / 87178291200.0);
  s = __builtin_fma(s, r, 1.0 / 6227020800.0);
  s = __builtin_fma(s, r, 1.0 / 479001600.0);
  s = __builtin_fma(s, r, 1.0 / 39916800.0);
  s = __builtin_fma(s, r, 1.0 / 3628800.0);
  s = __builtin_fma(s, r, 1.0 / 362880.0);
  s = __builtin_fma(s, r, 1.0 / 40320.0);
  s = __builtin_fma(s, r, 1.0 / 5040.0);
  s = __builtin_fma(s, r, 1.0 / 720.0);
  s = __builtin_fma(s, r, 1.0 / 120.0);
  s = __builtin_fma(s, r, 1.0 / 24.0);
  s = __builtin_fma(s, r, 1.0 / 6.0);
  s = __builtin_fma(s, r, 0.5);
  const double em1_r = __builtin_fma(r * r, s, r);  // e^r - 1
  const std::uint64_t bits = (__builtin_bit_cast(std::uint64_t, shifted) + 1023) << 52;
  const double two_n = __builtin_bit_cast(double, bits);
  const double em1 = __builtin_fma(two_n, em1_r, two_n - 1.0);  // e^(2c) - 1
  const double t = em1 / (em1 + 2.0);
  const std::uint64_t ut = __builtin_bit_cast(std::uint64_t, t) | (ux & kSign);
  const std::uint64_t nan = 0ull - static_cast<std::uint64_t>(ua > 0x7ff0000000000000ull);  // all ones for NaN
  return __builtin_bit_cast(double, (ux & nan) | (ut & ~nan));                              // NaN: x itself
#endif
}

}  // namespace sp::nn
