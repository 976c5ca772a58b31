// tanh_f32 against the double library tanh rounded to float: within 1 ulp on
// a dense sweep of the float line, and the special values of its contract.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/nn/tanh_f32.hpp"

namespace {

std::int64_t ordered(float f) {  // float -> integer whose difference counts ulps
  std::int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i < 0 ? -static_cast<std::int64_t>(i & 0x7fffffff) : i;
}

TEST(NnTanh, WithinOneUlpOfTheRoundedTrueValue) {
  // Every 11th float from 0 up to 16 (past the clamp at 10), both signs:
  // about 1.1e9 / 11 points per sign, tiny and subnormal values included.
  const std::uint32_t top = 0x41800000u;  // 16.0f
  std::int64_t worst = 0;
  float worst_x = 0;
  for (std::uint32_t b = 0; b <= top; b += 11)
    for (std::uint32_t sign : {0u, 0x80000000u}) {
      const std::uint32_t u = b | sign;
      float x;
      std::memcpy(&x, &u, sizeof x);
      const float want = static_cast<float>(std::tanh(static_cast<double>(x)));
      const std::int64_t d = std::llabs(ordered(sp::nn::tanh_f32(x)) - ordered(want));
      if (d > worst) worst = d, worst_x = x;
    }
  EXPECT_LE(worst, 1) << "at x = " << worst_x;
}

TEST(NnTanh, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(sp::nn::tanh_f32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(sp::nn::tanh_f32(inf), 1.0f);
  EXPECT_EQ(sp::nn::tanh_f32(-inf), -1.0f);
  EXPECT_EQ(sp::nn::tanh_f32(1e30f), 1.0f);
  EXPECT_EQ(sp::nn::tanh_f32(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(sp::nn::tanh_f32(-0.0f)));
  EXPECT_EQ(sp::nn::tanh_f32(1e-20f), 1e-20f);
  EXPECT_EQ(sp::nn::tanh_f32(-3e-4f), static_cast<float>(std::tanh(static_cast<double>(-3e-4f))));
}

}  // namespace
