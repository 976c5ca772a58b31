// binary16 conversions: exact values, round-to-nearest-even at the ties,
// overflow, subnormals, and the float-accumulating reduction step.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/collectives/fp16.hpp"
#include "kernels/comm/ring.hpp"

using sp::coll::fp16;
using sp::coll::half_bits_from_float;
using sp::coll::float_from_half_bits;

TEST(Fp16, KnownEncodings) {
  EXPECT_EQ(half_bits_from_float(1.0f), 0x3c00);
  EXPECT_EQ(half_bits_from_float(-2.0f), 0xc000);
  EXPECT_EQ(half_bits_from_float(65504.0f), 0x7bff);  // largest finite
  EXPECT_EQ(half_bits_from_float(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(half_bits_from_float(0x1p-14f), 0x0400);  // smallest normal
  EXPECT_EQ(half_bits_from_float(INFINITY), 0x7c00);
  EXPECT_EQ(half_bits_from_float(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(float_from_half_bits(half_bits_from_float(NAN))));
}

TEST(Fp16, RoundsToNearestEven) {
  // Spacing is 2 between 2048 and 4096: 2049 ties down to 2048 (even), 2051 up to 2052.
  EXPECT_EQ(float(fp16(2049.0f)), 2048.0f);
  EXPECT_EQ(float(fp16(2051.0f)), 2052.0f);
  EXPECT_EQ(float(fp16(2049.5f)), 2050.0f);           // not a tie: nearest
  EXPECT_EQ(half_bits_from_float(65519.0f), 0x7bff);  // below the midpoint to 2^16
  EXPECT_EQ(half_bits_from_float(65520.0f), 0x7c00);  // the tie rounds to even: infinity
  EXPECT_EQ(half_bits_from_float(0x1p-25f), 0x0000);  // subnormal tie to even (0)
  EXPECT_EQ(half_bits_from_float(0x3p-25f), 0x0002);  // subnormal tie to even (2)
}

TEST(Fp16, EveryFiniteValueRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    if ((h & 0x7c00) == 0x7c00 && (h & 0x03ff)) continue;  // NaN payloads
    ASSERT_EQ(half_bits_from_float(float_from_half_bits(h)), h) << std::hex << b;
  }
}

TEST(Fp16, ReductionAccumulatesInFloatAndRoundsOncePerStep) {
  // 2048 + 1 is a tie in binary16 and rounds to 2048; a reduction that kept
  // float between steps would reach 2050 after two additions.
  fp16 acc[1] = {fp16(2048.0f)}, one[1] = {fp16(1.0f)};
  sp::comm::reduce_into(acc, one, 1, sp::comm::Op::sum);
  sp::comm::reduce_into(acc, one, 1, sp::comm::Op::sum);
  EXPECT_EQ(float(acc[0]), 2048.0f);
  fp16 m[1] = {fp16(-3.0f)}, x[1] = {fp16(-2.5f)};
  sp::comm::reduce_into(m, x, 1, sp::comm::Op::max);
  EXPECT_EQ(float(m[0]), -2.5f);
}
