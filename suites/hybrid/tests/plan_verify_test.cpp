// The verification's parts that run without the composed step: which
// layouts it picks, its statistics, the scaled-down shape, and the refusal
// when the step is absent or the job has one rank.
#include <gtest/gtest.h>

#include <cmath>

#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"
#include "suites/hybrid/plan_verify.hpp"

namespace {

using namespace sp::hybrid;
using namespace sp::hybrid::plan;
const double u = sp::unit_roundoff<double>();

TEST(PlanVerify, PicksTheTopAndASpreadOfTheRest) {
  EXPECT_EQ(pick_verified(20, 3), (std::vector<int>{0, 1, 2, 3, 11, 19}));
  EXPECT_EQ(pick_verified(10, 1), (std::vector<int>{0, 5}));
  EXPECT_EQ(pick_verified(5, 3), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(pick_verified(2, 3), (std::vector<int>{0, 1}));
  EXPECT_EQ(pick_verified(0, 3), (std::vector<int>{}));
  for (int n : {7, 50, 1000})
    for (int k : {1, 2, 4, 8}) {
      const auto idx = pick_verified(n, k);
      EXPECT_EQ(static_cast<int>(idx.size()), std::min(n, 2 * k)) << n << " " << k;
      for (size_t i = 1; i < idx.size(); ++i) EXPECT_LT(idx[i - 1], idx[i]);
      EXPECT_LT(idx.back(), n);
    }
}

TEST(PlanVerify, SpearmanOfKnownData) {
  // Monotone (not linear) agreement is 1, reversed -1, exactly.
  EXPECT_EQ(spearman({1, 2, 3, 4}, {1, 8, 27, 64}), 1.0);
  EXPECT_EQ(spearman({1, 2, 3, 4}, {9, 5, 2, 1}), -1.0);
  // Ten (IQ, hours of TV) pairs without ties: 1 - 6 sum d^2 / (n (n^2 - 1)) = -29/165.
  const std::vector<double> iq = {106, 100, 86, 101, 99, 103, 97, 113, 112, 110};
  const std::vector<double> tv = {7, 27, 2, 50, 28, 29, 20, 12, 6, 17};
  const double want = -29.0 / 165;
  EXPECT_LE(std::fabs(spearman(iq, tv) - want), sp::gamma_n(40, u) * std::fabs(want));
  // Ties take the average rank: ranks (1, 2.5, 2.5, 4) vs (1, 3, 2, 4): 4.5 / sqrt(4.5 * 5).
  const double tied = 4.5 / std::sqrt(4.5 * 5);
  EXPECT_LE(std::fabs(spearman({1, 2, 2, 3}, {1, 3, 2, 4}) - tied), sp::gamma_n(16, u) * tied);
  EXPECT_TRUE(std::isnan(spearman({1}, {1})));
  EXPECT_TRUE(std::isnan(spearman({2, 2, 2}, {1, 2, 3})));
}

TEST(PlanVerify, MeanAbsoluteRelativeError) {
  EXPECT_EQ(mean_abs_rel_error({1.5, 0.5}, {1, 1}), 0.5);
  EXPECT_EQ(mean_abs_rel_error({3, 3}, {3, 3}), 0.0);
  const double got = mean_abs_rel_error({1.1, 0.8, 2.0}, {1.0, 1.0, 2.5});
  const double want = (0.1 + 0.2 + 0.2) / 3;
  EXPECT_LE(std::fabs(got - want), sp::gamma_n(8, u) * want);
}

TEST(PlanVerify, ScaledDownShapeAdmitsEveryGridOfItsRanks) {
  for (int ranks : {2, 3, 4, 8}) {
    const ModelShape m = scale_down(ranks);
    int valid = 0;
    for (const Layout& l : enumerate_layouts(m, ranks, StorageType::fp32)) valid += layout_error(m, l, ranks).empty();
    EXPECT_GT(valid, 0);
    // Every tp dividing the ranks divides the heads.
    for (int tp = 1; tp <= ranks; ++tp)
      if (ranks % tp == 0) EXPECT_EQ(m.heads % tp, 0);
    EXPECT_EQ(m.vocab, 0);
  }
}

TEST(PlanVerify, RefusesWithoutTheComposedStepOrOnOneRank) {
  // In a test process there is one rank; without hybrid_step the step is named.
  try {
    verify(1, StorageType::fp32, 0.01);
    FAIL() << "verify ran";
  } catch (const sp::InputError& e) {
    const std::string what = e.what();
    const bool named =
        what.find("2 or more ranks") != std::string::npos || what.find("hybrid_step") != std::string::npos;
    EXPECT_TRUE(named) << what;
  }
}

}  // namespace
