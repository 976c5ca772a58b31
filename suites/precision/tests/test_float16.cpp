// fp16_t and bf16_t against the reference conversions, bit for bit: every
// upper half-word of an fp32 (all signs, exponents and leading fraction
// bits) combined with lower half-words placed on and around the rounding
// ties of both formats (including fp16's subnormal ties), plus NaN and inf.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/precision/float16.hpp"
#include "reference/precision/float16_ref.hpp"

namespace {

using sp::precision::bf16_t;
using sp::precision::bits_float;
using sp::precision::fp16_t;
using sp::reference::decode16;
using sp::reference::encode16;
using sp::reference::is_nan16;
using sp::reference::kBfloat16;
using sp::reference::kBinary16;

// Low 16 bits: exact ties for bf16 (0x8000) and for fp16 normals (0x1000) and
// subnormals (0x2000, 0x4000, 0x8000 and above), one ulp either side, and
// a few arbitrary patterns.
const std::vector<uint32_t> kLow = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x2001,
                                    0x3000, 0x4000, 0x5fff, 0x6000, 0x7fff, 0x8000, 0x8001, 0x9000,
                                    0xa000, 0xc000, 0xe000, 0xf000, 0xffff, 0x1234, 0xabcd};

template <class T>
void check_all(const sp::reference::Format16& f) {
  long long checked = 0, wrong = 0;
  for (uint32_t hi = 0; hi < 0x10000u; ++hi)
    for (uint32_t lo : kLow) {
      const uint32_t bits = (hi << 16) | lo;
      const float x = bits_float(bits);
      const uint16_t got = T::from_float(x).bits;
      ++checked;
      if (std::isnan(x)) {
        // Any quiet NaN with the input's sign.
        wrong += !is_nan16(got, f) || (got >> 15) != (bits >> 31);
        continue;
      }
      const uint16_t want = encode16(x, f);
      if (got != want && wrong++ < 5)
        ADD_FAILURE() << std::hex << "input 0x" << bits << ": got 0x" << got << ", want 0x" << want;
    }
  EXPECT_EQ(wrong, 0) << "of " << checked;
  EXPECT_EQ(checked, 0x10000LL * kLow.size());
}

TEST(Float16, Fp16RoundsToNearestEvenBitExact) { check_all<fp16_t>(kBinary16); }
TEST(Float16, Bf16RoundsToNearestEvenBitExact) { check_all<bf16_t>(kBfloat16); }

TEST(Float16, DecodeIsExactForEveryPattern) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const fp16_t h{uint16_t(b)};
    const bf16_t g{uint16_t(b)};
    const double wh = decode16(uint16_t(b), kBinary16), wg = decode16(uint16_t(b), kBfloat16);
    if (std::isnan(wh))
      EXPECT_TRUE(std::isnan(h.to_float())) << b;
    else
      ASSERT_EQ(double(h.to_float()), wh) << std::hex << b;
    if (std::isnan(wg))
      EXPECT_TRUE(std::isnan(g.to_float())) << b;
    else
      ASSERT_EQ(double(g.to_float()), wg) << std::hex << b;
  }
}

TEST(Float16, KnownValues) {
  // Formats' landmarks (docs/precision.md "Mixed precision").
  EXPECT_EQ(fp16_t::from_float(65504.0f).bits, 0x7bff);         // max
  EXPECT_EQ(fp16_t::from_float(65519.99f).bits, 0x7bff);        // below the tie: stays max
  EXPECT_EQ(fp16_t::from_float(65520.0f).bits, 0x7c00);         // tie to even: inf
  EXPECT_EQ(fp16_t::from_float(0x1p-14f).bits, 0x0400);         // min normal
  EXPECT_EQ(fp16_t::from_float(0x1p-24f).bits, 0x0001);         // min subnormal
  EXPECT_EQ(fp16_t::from_float(0x1p-25f).bits, 0x0000);         // half of it: tie to even 0
  EXPECT_EQ(fp16_t::from_float(0x1.8p-25f).bits, 0x0001);       // above the tie
  EXPECT_EQ(fp16_t::from_float(1.0f + 0x1p-11f).bits, 0x3c00);  // tie between 1 and 1+2^-10: even
  EXPECT_EQ(bf16_t::from_float(1.0f + 0x1p-8f).bits, 0x3f80);   // tie: even
  EXPECT_EQ(bf16_t::from_float(1.0f + 0x1.8p-8f).bits, 0x3f81);
  EXPECT_EQ(bf16_t::from_float(-INFINITY).bits, 0xff80);
  EXPECT_EQ(bf16_t::from_float(3.4028235e38f).bits, 0x7f80);  // fp32 max rounds up to inf in bf16
}

}  // namespace
