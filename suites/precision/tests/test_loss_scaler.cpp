// Dynamic loss scaling: the GradScaler state machine against the reference
// on scripted overflow patterns (exact sequence equality), the defaults'
// landmarks, and the device-side inf/NaN count that feeds it.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>

#include "kernels/precision/loss_scaler.hpp"
#include "reference/precision/scaler_ref.hpp"

namespace {

using sp::precision::GradScaler;
using sp::precision::ScalerConfig;

// Runs the scaler over a pattern; returns the scale used at each step and the applied flags.
sp::reference::ScaleTrace run(const std::vector<bool>& overflow, ScalerConfig c = {}) {
  GradScaler s(c);
  sp::reference::ScaleTrace t;
  for (bool o : overflow) {
    t.scale_used.push_back(s.scale());
    t.applied.push_back(s.update(o));
  }
  return t;
}

std::vector<bool> pattern(size_t n, std::initializer_list<size_t> overflow_at) {
  std::vector<bool> p(n, false);
  for (size_t i : overflow_at) p[i] = true;
  return p;
}

void expect_same(const std::vector<bool>& p) {
  const auto got = run(p);
  const auto want = sp::reference::scaler_trace(p);
  ASSERT_EQ(got.scale_used.size(), want.scale_used.size());
  for (size_t t = 0; t < p.size(); ++t) {
    ASSERT_EQ(got.scale_used[t], want.scale_used[t]) << "step " << t;
    ASSERT_EQ(got.applied[t], want.applied[t]) << "step " << t;
  }
}

TEST(LossScaler, MatchesReferenceOnScriptedPatterns) {
  expect_same(pattern(4500, {}));            // growth at 2000 and 4000
  expect_same(pattern(50, {0, 1, 2}));       // repeated overflow: 2^16 -> 2^13
  expect_same(pattern(4200, {1999, 4001}));  // an overflow just before growth resets the count
  expect_same(pattern(4200, {2000}));        // just after growth
  std::vector<bool> r(7000);
  uint64_t s = 1;
  for (size_t i = 0; i < r.size(); ++i) r[i] = ((s = s * 6364136223846793005ULL + 1) >> 33) % 1500 == 0;
  expect_same(r);
}

TEST(LossScaler, TorchDefaults) {
  // init 2^16; overflow halves and skips; 2000 clean steps double.
  auto t = run(pattern(2002, {0}));
  EXPECT_EQ(t.scale_used[0], 65536.0);
  EXPECT_FALSE(t.applied[0]);
  EXPECT_EQ(t.scale_used[1], 32768.0);
  EXPECT_TRUE(t.applied[1]);
  EXPECT_EQ(t.scale_used[2000], 32768.0);  // 1999 clean steps so far
  EXPECT_EQ(t.scale_used[2001], 65536.0);  // the 2000th clean step doubled it
}

TEST(LossScaler, StaticScaleSkipsButNeverChanges) {
  ScalerConfig c;
  c.dynamic = false;
  c.init_scale = 1024;
  auto t = run(pattern(3000, {5, 6}), c);
  for (size_t i = 0; i < t.scale_used.size(); ++i) ASSERT_EQ(t.scale_used[i], 1024.0);
  EXPECT_FALSE(t.applied[5]);
  EXPECT_TRUE(t.applied[7]);
}

TEST(LossScaler, RejectsBadConfig) {
  ScalerConfig c;
  c.init_scale = 0;
  EXPECT_THROW(GradScaler{c}, sp::InputError);
  c = {};
  c.backoff_factor = 1.5;
  EXPECT_THROW(GradScaler{c}, sp::InputError);
}

template <class S>
void count_injected() {
  Kokkos::View<S*> g("g", 1000);
  auto h = Kokkos::create_mirror_view(g);
  for (int i = 0; i < 1000; ++i) h(i) = sp::precision::from_f32<S>(float(i) * 0.01f - 3);
  EXPECT_EQ(sp::precision::count_nonfinite<S>(g), 0);
  h(3) = sp::precision::from_f32<S>(INFINITY);
  h(500) = sp::precision::from_f32<S>(-INFINITY);
  h(999) = sp::precision::from_f32<S>(NAN);
  Kokkos::deep_copy(g, h);
  EXPECT_EQ(sp::precision::count_nonfinite<S>(g), 3);
}

TEST(LossScaler, CountsNonFiniteGradients) {
  count_injected<float>();
  count_injected<sp::precision::fp16_t>();
  count_injected<sp::precision::bf16_t>();
  // fp16 overflow: 70000 is finite in fp32 but inf once stored in fp16.
  Kokkos::View<sp::precision::fp16_t*> g("g", 2);
  auto h = Kokkos::create_mirror_view(g);
  h(0) = sp::precision::fp16_t::from_float(70000.0f);
  h(1) = sp::precision::fp16_t::from_float(1.0f);
  Kokkos::deep_copy(g, h);
  EXPECT_EQ(sp::precision::count_nonfinite<sp::precision::fp16_t>(g), 1);
}

}  // namespace
