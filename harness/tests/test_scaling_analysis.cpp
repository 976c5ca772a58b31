// Fits and verdicts of a sweep, from crafted sweep.json content with known
// laws: oversubscribed points must stay out of the fit, a point off the law
// must fail, two points must be reported as an exact (unjudged) fit.
#include <gtest/gtest.h>

#include "scaling_analysis.hpp"
#include "scaling_fit.hpp"

namespace {

nlohmann::json sweep(const std::string& mode, const std::vector<std::tuple<double, double, bool>>& pts) {
  nlohmann::json points = nlohmann::json::array();
  for (auto& [n, t, over] : pts) points.push_back({{"n", n}, {"seconds", t}, {"oversubscribed", over}});
  return {{"technique", "split_work"},
          {"mode", mode},
          {"axis", "ranks"},
          {"band", 0.1},
          {"series", {{{"variant", "kokkos"}, {"params", "work=1"}, {"points", points}}}}};
}

const sp::Verdict* series_verdict(const sp::ScalingAnalysis& a) { return &a.verdicts.back(); }

}  // namespace

TEST(ScalingAnalysis, StrongFitIgnoresOversubscribedPoints) {
  // f = 0.9, T(1) = 1; the oversubscribed point at 8 is wildly off and must not matter.
  auto a = sp::analyse_sweep(sweep("strong", {{1, 1.0, false}, {2, 0.55, false}, {4, 0.325, false}, {8, 5.0, true}}));
  ASSERT_EQ(a.fits.size(), 1u);
  EXPECT_NEAR(a.fits[0]["amdahl"]["f"].get<double>(), 0.9, 1e-12);
  EXPECT_EQ(a.fits[0]["amdahl"]["dof"].get<int>(), 1);
  EXPECT_NEAR(a.fits[0]["points"][1]["karp_flatt"].get<double>(), 0.1, 1e-12);
  EXPECT_FALSE(a.fits[0]["points"][3]["timed"].get<bool>());
  EXPECT_NEAR(a.fits[0]["points"][2]["law_speedup"].get<double>(), 1 / (0.1 + 0.9 / 4), 1e-12);
  EXPECT_NEAR(a.fits[0]["points"][2]["ratio_to_law"].get<double>(), 1, 1e-12);
  EXPECT_NEAR(a.fits[0]["points"][3]["ratio_to_law"].get<double>(), (1 / 5.0) / (1 / (0.1 + 0.9 / 8)), 1e-12);
  EXPECT_EQ(a.fits[0]["karp_flatt_trend"]["trend"], "constant");
  EXPECT_EQ(series_verdict(a)->status, sp::Status::pass) << series_verdict(a)->note;
  for (auto& v : a.verdicts) EXPECT_NE(v.quantity, "speedup at 8 ranks");
}

TEST(ScalingAnalysis, PointOffTheLawFails) {
  // 1, 2, 4 on Amdahl f = 0.9, then 8 ranks taking twice the law's time: outside +-10%.
  const double t8 = (0.1 + 0.9 / 8) * 2.0;
  auto a = sp::analyse_sweep(sweep("strong", {{1, 1.0, false}, {2, 0.55, false}, {4, 0.325, false}, {8, t8, false}}));
  EXPECT_EQ(series_verdict(a)->status, sp::Status::fail);
  int failed = 0;
  for (auto& v : a.verdicts) failed += v.status == sp::Status::fail;
  EXPECT_GE(failed, 2);  // at least the 8-rank point and the series
  EXPECT_EQ(a.fits[0]["karp_flatt_trend"]["trend"], "growing");
}

TEST(ScalingAnalysis, TwoPointsAreAnExactFitNotJudged) {
  auto a = sp::analyse_sweep(sweep("strong", {{1, 1.0, false}, {2, 0.6, false}, {3, 0.9, true}}));
  EXPECT_NEAR(a.fits[0]["amdahl"]["f"].get<double>(), 0.8, 1e-12);
  EXPECT_EQ(series_verdict(a)->status, sp::Status::info);
  // A slowdown is still a failure: no Amdahl law has time growing with N.
  auto slow = sp::analyse_sweep(sweep("strong", {{1, 1.0, false}, {2, 1.3, false}}));
  EXPECT_EQ(series_verdict(slow)->status, sp::Status::fail);
  EXPECT_LT(slow.fits[0]["amdahl"]["f"].get<double>(), 0);
  auto one = sp::analyse_sweep(sweep("strong", {{1, 1.0, false}, {2, 1.3, true}}));
  EXPECT_EQ(series_verdict(one)->status, sp::Status::info);
}

TEST(ScalingAnalysis, WeakFitsGustafson) {
  // Scaled speedup N T(1)/T(N) = (1-f) + f N with f = 0.8, so T(N) = N / (0.2 + 0.8 N).
  std::vector<std::tuple<double, double, bool>> pts;
  for (double n : {1.0, 2.0, 4.0, 8.0}) pts.push_back({n, n / sp::scaling::gustafson_speedup(0.8, n), false});
  auto a = sp::analyse_sweep(sweep("weak", pts));
  EXPECT_NEAR(a.fits[0]["gustafson"]["f"].get<double>(), 0.8, 1e-12);
  EXPECT_NEAR(a.fits[0]["points"][2]["speedup"].get<double>(), 0.2 + 0.8 * 4, 1e-12);
  EXPECT_EQ(series_verdict(a)->status, sp::Status::pass) << series_verdict(a)->note;
}
