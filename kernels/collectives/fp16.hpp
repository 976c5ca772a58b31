#pragma once
// IEEE 754 binary16 storage with float arithmetic, for the fp16 collectives.
//
// Why not Kokkos::Experimental::half_t: in Kokkos 3.4 without CUDA it is a
// typedef for float (KOKKOS_HALF_T_IS_FLOAT), so an "fp16" buffer would move
// 4 bytes per element and never round. This type is 2 bytes on every back end
// and bit-compatible with __half and ncclHalf. Reductions convert both
// operands to float, combine in float and round once to nearest-even per
// step, as NCCL does for half (accumulate in float, store in half).
//
// Conversions after F. Giesen, "float->half variants" (2016), the
// round-to-nearest-even versions: exact for every finite binary16 value,
// overflow to infinity, NaN preserved.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>

namespace sp::coll {

KOKKOS_INLINE_FUNCTION uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
KOKKOS_INLINE_FUNCTION float f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// Round a float to the nearest binary16 (ties to even).
KOKKOS_INLINE_FUNCTION uint16_t half_bits_from_float(float value) {
  uint32_t x = f32_bits(value);
  const uint32_t sign = x & 0x80000000u;
  x ^= sign;
  uint32_t o;
  if (x >= (127u + 16u) << 23) {               // |v| >= 65536, inf or NaN
    o = x > (255u << 23) ? 0x7e00u : 0x7c00u;  // NaN stays NaN, else infinity
  } else if (x < (113u << 23)) {               // |v| < 2^-14: binary16 subnormal or zero
    // Adding 0.5 aligns the subnormal's bits at the bottom of the float
    // mantissa; the float adder does the round-to-nearest-even.
    const float magic = f32_from_bits(126u << 23);
    o = f32_bits(f32_from_bits(x) + magic) - (126u << 23);
  } else {  // normal: rebias, round the 13 dropped bits
    const uint32_t mant_odd = (x >> 13) & 1u;
    x += ((15u - 127u) << 23) + 0xfffu + mant_odd;
    o = x >> 13;  // a carry into the exponent rounds up to inf correctly
  }
  return static_cast<uint16_t>(o | (sign >> 16));
}

KOKKOS_INLINE_FUNCTION float float_from_half_bits(uint16_t h) {
  const uint32_t shifted_exp = 0x7c00u << 13;
  uint32_t o = (static_cast<uint32_t>(h) & 0x7fffu) << 13;
  const uint32_t exp = shifted_exp & o;
  o += (127u - 15u) << 23;
  if (exp == shifted_exp) {
    o += (128u - 16u) << 23;  // inf / NaN
  } else if (exp == 0) {      // zero / subnormal: renormalise through the float unit
    o += 1u << 23;
    o = f32_bits(f32_from_bits(o) - f32_from_bits(113u << 23));
  }
  return f32_from_bits(o | ((static_cast<uint32_t>(h) & 0x8000u) << 16));
}

struct fp16 {
  uint16_t bits;
  fp16() = default;
  KOKKOS_INLINE_FUNCTION explicit fp16(float f) : bits(half_bits_from_float(f)) {}
  KOKKOS_INLINE_FUNCTION explicit operator float() const { return float_from_half_bits(bits); }
  // Combine in float, round once: one rounding per reduction step.
  KOKKOS_INLINE_FUNCTION fp16& operator+=(fp16 o) {
    bits = half_bits_from_float(float(*this) + float(o));
    return *this;
  }
  KOKKOS_INLINE_FUNCTION bool operator<(fp16 o) const { return float(*this) < float(o); }
};
static_assert(sizeof(fp16) == 2, "fp16 must be 2 bytes");

}  // namespace sp::coll
