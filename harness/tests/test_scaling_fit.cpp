// Scaling-law fits on synthetic timings with a known parallel fraction:
// exact data must give f back to rounding; noisy data must give f within
// the worst-case bound that the noise level implies for a linear
// least-squares estimate (derived below, not tuned).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "scaling_fit.hpp"

namespace sc = sp::scaling;

namespace {

const std::vector<double> kN = {1, 2, 3, 4, 6, 8};

std::vector<double> amdahl_times(double ts, double tp, const std::vector<double>& n) {
  std::vector<double> t;
  for (double x : n) t.push_back(ts + tp / x);
  return t;
}

}  // namespace

TEST(ScalingFit, AmdahlExactRecoversF) {
  for (double f : {0.0, 0.5, 0.9, 0.99, 1.0}) {
    const double t1 = 2.0;
    auto fit = sc::fit_amdahl(kN, amdahl_times((1 - f) * t1, f * t1, kN));
    ASSERT_TRUE(fit.ok);
    EXPECT_NEAR(fit.f, f, 1e-12);
    EXPECT_NEAR(fit.t_serial, (1 - f) * t1, 1e-12);
    EXPECT_NEAR(fit.t_parallel, f * t1, 1e-12);
    EXPECT_LT(fit.rms_rel_residual, 1e-12);
    EXPECT_EQ(fit.points, static_cast<int>(kN.size()));
  }
}

TEST(ScalingFit, AmdahlNeedsTwoDistinctCounts) {
  EXPECT_FALSE(sc::fit_amdahl({2}, {1.0}).ok);
  EXPECT_FALSE(sc::fit_amdahl({2, 2}, {1.0, 1.1}).ok);
  EXPECT_TRUE(sc::fit_amdahl({1, 2}, {1.0, 0.6}).ok);
}

// T_i = T(N_i) (1 + eps_i), |eps_i| <= delta. The fit is linear in T:
// T_p = sum w_i T_i with w_i = (x_i - mean x) / Sxx, x = 1/N, and
// T_s = sum (1/m - mean x w_i) T_i. So |dT_p| <= A = sum |w_i| delta T_i and
// |dT_s| <= B = sum |1/m - mean x w_i| delta T_i. f = T_p / (T_s + T_p) is
// monotone in each perturbation (for T_s + dT_s > 0), so its extremes lie at
// the four corners (+-A, +-B): that is the bound asserted.
TEST(ScalingFit, AmdahlNoisyWithinDerivedBound) {
  const double delta = 0.03, ts = 0.2, tp = 1.8, f = tp / (ts + tp);
  const size_t m = kN.size();
  double mx = 0;
  for (double n : kN) mx += 1 / n / m;
  double sxx = 0;
  for (double n : kN) sxx += (1 / n - mx) * (1 / n - mx);
  auto clean = amdahl_times(ts, tp, kN);
  double A = 0, B = 0;
  for (size_t i = 0; i < m; ++i) {
    const double w = (1 / kN[i] - mx) / sxx;
    A += std::fabs(w) * delta * clean[i];
    B += std::fabs(1.0 / m - mx * w) * delta * clean[i];
  }
  double bound = 0;
  for (double a : {-A, A})
    for (double b : {-B, B}) bound = std::fmax(bound, std::fabs((tp + a) / (ts + b + tp + a) - f));
  ASSERT_LT(bound, 0.2) << "noise level too high for a meaningful test";
  std::mt19937 gen(12345);
  std::uniform_real_distribution<double> eps(-delta, delta);
  double worst = 0;
  for (int trial = 0; trial < 500; ++trial) {
    auto t = clean;
    for (auto& x : t) x *= 1 + eps(gen);
    auto fit = sc::fit_amdahl(kN, t);
    ASSERT_TRUE(fit.ok);
    EXPECT_LE(std::fabs(fit.f - f), bound) << "trial " << trial;
    worst = std::fmax(worst, std::fabs(fit.f - f));
  }
  EXPECT_GT(worst, 0) << "the noise did not reach the fit";
}

TEST(ScalingFit, GustafsonExactAndNoisy) {
  const std::vector<double> n = {2, 3, 4, 8};
  for (double f : {0.5, 0.95}) {
    std::vector<double> s;
    for (double x : n) s.push_back(sc::gustafson_speedup(f, x));
    EXPECT_NEAR(sc::fit_gustafson(n, s), f, 1e-12);
    // f = sum (S-1)(N-1) / sum (N-1)^2 is linear in S: |df| <= sum |N-1| delta S / sum (N-1)^2.
    const double delta = 0.02;
    double num = 0, den = 0;
    for (size_t i = 0; i < n.size(); ++i) num += (n[i] - 1) * delta * s[i], den += (n[i] - 1) * (n[i] - 1);
    std::mt19937 gen(7);
    std::uniform_real_distribution<double> eps(-delta, delta);
    for (int trial = 0; trial < 200; ++trial) {
      auto noisy = s;
      for (auto& x : noisy) x *= 1 + eps(gen);
      EXPECT_LE(std::fabs(sc::fit_gustafson(n, noisy) - f), num / den);
    }
  }
}

TEST(ScalingFit, KarpFlattConstantUnderAmdahl) {
  // For Amdahl speedups e(N) = 1 - f exactly (Karp & Flatt 1990).
  for (double f : {0.5, 0.9, 0.999})
    for (double n : {2.0, 4.0, 16.0, 1024.0}) EXPECT_NEAR(sc::karp_flatt(sc::amdahl_speedup(f, n), n), 1 - f, 1e-12);
  EXPECT_TRUE(std::isnan(sc::karp_flatt(1.0, 1.0)));
  std::vector<double> e;
  for (double n : kN) e.push_back(sc::karp_flatt(sc::amdahl_speedup(0.9, n), n));
  EXPECT_STREQ(sc::karp_flatt_trend(kN, e, 1e-9).word, "constant");
}

TEST(ScalingFit, KarpFlattGrowsWithParallelOverhead) {
  // T(N) = T_s + T_p/N + c N: an overhead growing with N makes e(N) grow.
  std::vector<double> e;
  const double t1 = 0.1 + 1.0 + 0.01;
  for (double n : kN) e.push_back(sc::karp_flatt(t1 / (0.1 + 1.0 / n + 0.01 * n), n));
  auto tr = sc::karp_flatt_trend(kN, e, 0.01);
  EXPECT_STREQ(tr.word, "growing");
  EXPECT_GT(tr.slope, 0);
  EXPECT_STREQ(sc::karp_flatt_trend({2}, {0.1}, 0.01).word, "undetermined");
}
