#pragma once
// Reference float -> 16-bit conversions, written from the format definitions
// rather than from bit tricks: the value is rounded in double arithmetic to
// the format's quantum with std::nearbyint (the default rounding mode is
// round-to-nearest-even), then encoded field by field. Used to test the
// kernels' fp16_t / bf16_t bit for bit.
#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>

namespace sp::reference {

struct Format16 {
  int precision;  // significand bits including the implicit one
  int emin;       // exponent of the smallest normal
  int emax;       // exponent of the largest finite
  int exp_bits;
};
constexpr Format16 kBinary16{11, -14, 15, 5};
constexpr Format16 kBfloat16{8, -126, 127, 8};

// Decodes a 16-bit pattern of the format into a double (NaN for NaNs).
inline double decode16(uint16_t bits, const Format16& f) {
  const int frac_bits = f.precision - 1;
  const int sign = bits >> 15;
  const int e = (bits >> frac_bits) & ((1 << f.exp_bits) - 1);
  const int m = bits & ((1 << frac_bits) - 1);
  const int bias = f.emax;
  double v;
  if (e == (1 << f.exp_bits) - 1)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = std::ldexp(static_cast<double>(m), f.emin - frac_bits);
  else
    v = std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -frac_bits), e - bias);
  return sign ? -v : v;
}

// Rounds x (finite, from a float) to the format with round-to-nearest-even
// and returns its bit pattern; NaN in -> a NaN pattern with x's sign.
inline uint16_t encode16(double x, const Format16& f) {
  const int frac_bits = f.precision - 1;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const uint16_t inf = static_cast<uint16_t>(((1 << f.exp_bits) - 1) << frac_bits);
  if (std::isnan(x)) return sign | inf | static_cast<uint16_t>(1 << (frac_bits - 1));
  const double a = std::fabs(x);
  if (std::isinf(a)) return sign | inf;
  if (a == 0) return sign;
  int exp2;
  std::frexp(a, &exp2);  // a = frac * 2^exp2, frac in [0.5, 1): the leading bit has exponent exp2-1
  const int e = std::max(exp2 - 1, f.emin);
  const double quantum = std::ldexp(1.0, e - frac_bits);
  std::fesetround(FE_TONEAREST);
  const double r = std::nearbyint(a / quantum) * quantum;  // a / quantum is exact (a power of two)
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -frac_bits), f.emax);
  if (r > max_finite) return sign | inf;
  // Encode the rounded value (which may have moved up one binade).
  if (r < std::ldexp(1.0, f.emin)) return sign | static_cast<uint16_t>(r / std::ldexp(1.0, f.emin - frac_bits));
  std::frexp(r, &exp2);
  const int er = exp2 - 1;
  const double frac = r / std::ldexp(1.0, er) - 1.0;  // in [0, 1)
  const uint16_t m = static_cast<uint16_t>(frac * (1 << frac_bits));
  return sign | static_cast<uint16_t>((er + f.emax) << frac_bits) | m;
}

inline bool is_nan16(uint16_t bits, const Format16& f) {
  const int frac_bits = f.precision - 1;
  const int e = (bits >> frac_bits) & ((1 << f.exp_bits) - 1);
  return e == (1 << f.exp_bits) - 1 && (bits & ((1 << frac_bits) - 1)) != 0;
}

}  // namespace sp::reference
