#pragma once
// Software 16-bit floating-point storage types: IEEE binary16 (fp16_t) and
// bfloat16 (bf16_t). Stored as 16 bits, converted to and from fp32 with
// round-to-nearest-even; arithmetic happens in fp32 (mixed precision as
// Micikevicius et al. 2018 use it: store in 16 bits, accumulate in 32).
//
// Why not Kokkos::Experimental::half_t: in Kokkos 3.4 without CUDA it is a
// typedef for float (KOKKOS_HALF_T_IS_FLOAT), so it neither halves the bytes
// nor rounds, and bhalf_t does not exist before Kokkos 4. These types behave
// the same in every back end (host and device code: plain bit operations).
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>

namespace sp::precision {

KOKKOS_INLINE_FUNCTION uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);  // memcpy: the defined way to pun, also in device code
  return u;
}
KOKKOS_INLINE_FUNCTION float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits.
struct fp16_t {
  uint16_t bits;

  KOKKOS_INLINE_FUNCTION static fp16_t from_float(float f) {
    const uint32_t x = float_bits(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u)  // inf stays inf; NaN becomes a quiet NaN (payload dropped)
      return {static_cast<uint16_t>(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u))};
    if (ax >= 0x477ff000u)  // >= 65520 = 65504 + half an ulp: the tie rounds to even, i.e. to inf
      return {static_cast<uint16_t>(sign | 0x7c00u)};
    if (ax < 0x38800000u) {                  // below 2^-14: an fp16 subnormal (or zero), in units of 2^-24
      if (ax <= 0x33000000u) return {sign};  // <= 2^-25: rounds to zero (2^-25 ties to even 0)
      const uint32_t e = ax >> 23;
      const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
      const uint32_t shift = 126u - e;  // value = m * 2^(e-150) = (m >> shift) units of 2^-24
      uint32_t q = m >> shift;
      const uint32_t rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
      q += (rem > halfway || (rem == halfway && (q & 1u))) ? 1u : 0u;
      return {static_cast<uint16_t>(sign | q)};  // q = 0x400 is the smallest normal: still right
    }
    const uint32_t r = ax - (112u << 23);  // rebias the exponent from 127 to 15
    uint32_t q = r >> 13;
    const uint32_t rem = r & 0x1fffu;
    q += (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) ? 1u : 0u;  // a carry into the exponent is right
    return {static_cast<uint16_t>(sign | q)};
  }

  // Branch-free (selects only) so that loops converting fp16 operands
  // vectorise: rebias the exponent; inf/NaN get the fp32 all-ones exponent;
  // zero and subnormals are m * 2^-24, computed exactly as
  // 2^-14 (1 + m/1024) - 2^-14.
  KOKKOS_INLINE_FUNCTION float to_float() const {
    const uint32_t o = static_cast<uint32_t>(bits & 0x7fffu) << 13;
    const uint32_t e = o & 0x0f800000u;
    uint32_t r = o + (112u << 23);
    r = e == 0x0f800000u ? r + (112u << 23) : r;
    const float sub = bits_float(o + (113u << 23)) - bits_float(113u << 23);
    const float mag = e == 0 ? sub : bits_float(r);
    return bits_float(float_bits(mag) | (static_cast<uint32_t>(bits & 0x8000u) << 16));
  }
};

// bfloat16: the upper 16 bits of an fp32 (1 sign, 8 exponent, 7 fraction).
struct bf16_t {
  uint16_t bits;

  KOKKOS_INLINE_FUNCTION static bf16_t from_float(float f) {
    const uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)  // NaN: keep sign and top payload, force quiet
      return {static_cast<uint16_t>((x >> 16) | 0x0040u)};
    // Round to nearest even on the 16 dropped bits; overflow carries into inf correctly.
    const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
    return {static_cast<uint16_t>(rounded >> 16)};
  }

  KOKKOS_INLINE_FUNCTION float to_float() const { return bits_float(static_cast<uint32_t>(bits) << 16); }
};

// The collectives' reduction rule for 16-bit buffers (kernels/comm/reduce.hpp
// applies acc += in and compares with <): both operands widened to fp32,
// combined there and rounded once to nearest-even per step, as NCCL reduces
// half and bfloat16 (accumulate in float, store in the 16-bit type). A ring
// all-reduce of p buffers therefore rounds p - 1 times.
KOKKOS_INLINE_FUNCTION fp16_t& operator+=(fp16_t& a, fp16_t b) {
  a = fp16_t::from_float(a.to_float() + b.to_float());
  return a;
}
KOKKOS_INLINE_FUNCTION bool operator<(fp16_t a, fp16_t b) { return a.to_float() < b.to_float(); }
KOKKOS_INLINE_FUNCTION bf16_t& operator+=(bf16_t& a, bf16_t b) {
  a = bf16_t::from_float(a.to_float() + b.to_float());
  return a;
}
KOKKOS_INLINE_FUNCTION bool operator<(bf16_t a, bf16_t b) { return a.to_float() < b.to_float(); }

// Conversions used by templated kernels: S is the storage type, float the
// arithmetic type.
KOKKOS_INLINE_FUNCTION float to_f32(float x) { return x; }
KOKKOS_INLINE_FUNCTION float to_f32(fp16_t x) { return x.to_float(); }
KOKKOS_INLINE_FUNCTION float to_f32(bf16_t x) { return x.to_float(); }

template <class S>
KOKKOS_INLINE_FUNCTION S from_f32(float x);
template <>
KOKKOS_INLINE_FUNCTION float from_f32<float>(float x) {
  return x;
}
template <>
KOKKOS_INLINE_FUNCTION fp16_t from_f32<fp16_t>(float x) {
  return fp16_t::from_float(x);
}
template <>
KOKKOS_INLINE_FUNCTION bf16_t from_f32<bf16_t>(float x) {
  return bf16_t::from_float(x);
}

// Storage-type facts used by counts() and error bounds.
template <class S>
struct StorageInfo;
template <>
struct StorageInfo<float> {
  static constexpr const char* name = "fp32";
  static constexpr double unit_roundoff = 0x1p-24;
};
template <>
struct StorageInfo<fp16_t> {
  static constexpr const char* name = "fp16";
  static constexpr double unit_roundoff = 0x1p-11;
};
template <>
struct StorageInfo<bf16_t> {
  static constexpr const char* name = "bf16";
  static constexpr double unit_roundoff = 0x1p-8;
};

}  // namespace sp::precision
