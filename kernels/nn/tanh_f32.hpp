#pragma once
// tanh of a float evaluated in double, without a library call and without
// branches, so that the host compiler inlines and vectorises the element-wise
// passes (GeLU runs one tanh per activation element, forward and backward; a
// libm call per element costs more than the GEMMs beside it at training
// shapes).
//
// What holds: the result is tanh(x) rounded to float, within 1 ulp (the
// double evaluation is accurate to about 1e-14 relative, far inside half a
// float ulp, so the only error is the final rounding, except at rounding ties
// within that distance); NaN gives x, +-inf gives +-1, -0 gives -0.
// Why, for c = min(|x|, 10) (tanh(10) rounds to 1 in float):
//   e^(2c) - 1 = 2^n (e^r - 1) + (2^n - 1), n = round(2c log2(e)) in [0, 29],
//   r = 2c - n ln2, |r| <= ln2/2 + 1e-15; e^r - 1 by its Taylor series to
//   r^11 (remainder below r^12/12! < 1e-14 relative); 2^n from the exponent
//   bits. Written as expm1 there is no cancellation: for n = 0 it is the
//   series itself (exact near 0, subnormal x included), for n >= 1 the sum is
//   >= 2 e^(-ln2/2) - 1 > 0.4. tanh(c) = (e^(2c) - 1) / (e^(2c) - 1 + 2).
// The clamp, the rounding to n (adding 1.5 2^52) and the NaN select are
// integer or exact operations, so the loop has no branch and nothing that can
// trap. A CUDA compilation uses the library's tanhf (within 2 ulp).
#include <Kokkos_Core.hpp>
#include <cstdint>

namespace sp::nn {

KOKKOS_INLINE_FUNCTION float tanh_f32(float x) {
#if defined(__CUDA_ARCH__) || defined(__NVCC__)
  return tanhf(x);
#else
  const std::uint32_t ux = __builtin_bit_cast(std::uint32_t, x), ua = ux & 0x7fffffffu;
  const std::uint32_t uc = ua < 0x41200000u ? ua : 0x41200000u;  // min(|x|, 10); NaN too
  const double c = static_cast<double>(__builtin_bit_cast(float, uc));
  const double shifted = c * 2.8853900817779268 + 6755399441055744.0;  // n + 1.5 2^52: n in the low bits
  const double n = shifted - 6755399441055744.0;
  const double r = 2.0 * c - n * 0.69314718055994530942;
  double p = 1.0 / 39916800;
  p = p * r + 1.0 / 3628800;
  p = p * r + 1.0 / 362880;
  p = p * r + 1.0 / 40320;
  p = p * r + 1.0 / 5040;
  p = p * r + 1.0 / 720;
  p = p * r + 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r + 1.0 / 6;
  p = p * r + 0.5;
  p = p * r + 1.0;
  const double q = p * r;
  const std::uint64_t bits = (__builtin_bit_cast(std::uint64_t, shifted) + 1023) << 52;
  const double two_n = __builtin_bit_cast(double, bits);
  const double em1 = two_n * q + (two_n - 1.0);
  const float t = static_cast<float>(em1 / (em1 + 2.0));
  const std::uint32_t ut = __builtin_bit_cast(std::uint32_t, t) | (ux & 0x80000000u);
  const std::uint32_t nan = 0u - static_cast<std::uint32_t>(ua > 0x7f800000u);  // all ones for NaN
  return __builtin_bit_cast(float, (ux & nan) | (ut & ~nan));                   // NaN: x itself
#endif
}

}  // namespace sp::nn
