// tanh_f32 against the double library tanh rounded to float: within 1 ulp on
// a dense sweep of the float line; tanh_f64 against long double tanh: within
// 4u relative (u = 2^-53, the bound the fp64 references assume) on a dense
// sweep; and the special values of both contracts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/nn/tanh_f32.hpp"
#include "kernels/nn/tanh_f64.hpp"

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

// Relative error of tanh_f64(x) in units of u = 2^-53, against long double.
double rel_err_u(double x) {
  const long double want = std::tanh(static_cast<long double>(x));
  if (want == 0) return sp::nn::tanh_f64(x) == 0 ? 0 : 1e300;
  return static_cast<double>(std::fabs((static_cast<long double>(sp::nn::tanh_f64(x)) - want) / want) * 0x1p53L);
}

TEST(NnTanh, F64WithinFourUnitRoundoffsOfTheTrueValue) {
  // Every 2^33-th double from 2^-40 up to 32 (past the clamp at 20), about
  // 3.8e5 points per sign, then 64 doubles on each side of every
  // reduction boundary k ln2 / 2 (where n changes) below the clamp.
  double worst = 0, worst_x = 0;
  auto at = [&](double x) {
    for (double v : {x, -x}) {
      const double e = rel_err_u(v);
      if (e > worst) worst = e, worst_x = v;
    }
  };
  std::uint64_t lo, hi;
  const double from = 0x1p-40, to = 32.0;
  std::memcpy(&lo, &from, sizeof lo);
  std::memcpy(&hi, &to, sizeof hi);
  for (std::uint64_t b = lo; b <= hi; b += std::uint64_t(1) << 33) {
    double x;
    std::memcpy(&x, &b, sizeof x);
    at(x);
  }
  for (int k = 1; k <= 58; ++k) {
    const double edge = k * 0.34657359027997264;
    for (int i = -64; i <= 64; ++i) at(edge + i * std::ldexp(1.0, std::ilogb(edge) - 52));
  }
  EXPECT_LE(worst, 4.0) << "at x = " << worst_x;
  RecordProperty("worst_relative_error_in_u", std::to_string(worst));
}

TEST(NnTanh, F64SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(std::isnan(sp::nn::tanh_f64(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_EQ(sp::nn::tanh_f64(inf), 1.0);
  EXPECT_EQ(sp::nn::tanh_f64(-inf), -1.0);
  EXPECT_EQ(sp::nn::tanh_f64(1e300), 1.0);
  EXPECT_EQ(sp::nn::tanh_f64(20.0), 1.0);
  EXPECT_EQ(sp::nn::tanh_f64(0.0), 0.0);
  EXPECT_TRUE(std::signbit(sp::nn::tanh_f64(-0.0)));
  EXPECT_EQ(sp::nn::tanh_f64(1e-200), 1e-200);
  EXPECT_EQ(sp::nn::tanh_f64(4.9e-324), 4.9e-324);
  EXPECT_EQ(sp::nn::tanh_f64(-1e-10), -1e-10);
}

}  // namespace
