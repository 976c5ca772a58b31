// The history gate and the per-rank spread: pure functions of their inputs.
#include <gtest/gtest.h>

#include "db/regression.hpp"
#include "stragglers.hpp"

namespace {

sp::db::TrendPoint point(const char* machine, double median) {
  sp::db::TrendPoint p;
  p.run.machine = machine;
  p.t.median = p.t.min = p.t.max = median;
  return p;
}

TEST(HistoryGate, ReferenceIsTheMedianOfPreviousRunsOnTheLastRunsMachine) {
  // The run on machine b is not this machine's history: left out of the reference.
  const std::vector<sp::db::TrendPoint> pts = {point("a", 1.0), point("b", 5.0), point("a", 3.0), point("a", 1.0),
                                               point("a", 1.2)};
  auto v = sp::db::judge_trend(pts, 5, 0.1);
  ASSERT_TRUE(v.judged);
  EXPECT_EQ(v.previous, 3);
  EXPECT_EQ(v.reference, 1.0);  // median of 1.0, 3.0, 1.0
  EXPECT_EQ(v.ratio, 1.2);
  EXPECT_TRUE(v.regression);
  EXPECT_FALSE(sp::db::judge_trend(pts, 5, 0.25).regression);
  // A window of 2: the two latest previous runs on a, 1.0 and 3.0, median 2.0.
  v = sp::db::judge_trend(pts, 2, 0.1);
  EXPECT_EQ(v.previous, 2);
  EXPECT_EQ(v.reference, 2.0);
  EXPECT_FALSE(v.regression);
}

TEST(HistoryGate, NoEarlierRunOnTheMachineIsNotJudged) {
  const auto v = sp::db::judge_trend({point("b", 1.0), point("a", 9.0)}, 5, 0.1);
  EXPECT_FALSE(v.judged);
  EXPECT_FALSE(v.regression);
  EXPECT_EQ(v.machine, "a");
}

TEST(Stragglers, SlowestRankOverTheOthersMedianWithItsHost) {
  const nlohmann::json bench = {
      {"benchmarks",
       {{{"run_name", "f/t/v/p=1/manual_time"},
         {"run_type", "iteration"},
         {"rank_s.0", 9.0},
         {"rank_s.1", 9.0},
         {"rank_s.2", 9.0}},
        {{"run_name", "f/t/v/p=1/manual_time"},
         {"run_type", "aggregate"},
         {"aggregate_name", "median"},
         {"rank_s.0", 2.0},
         {"rank_s.1", 1.0},
         {"rank_s.2", 4.0}},
        {{"run_name", "f/t/v/p=2"}, {"run_type", "iteration"}, {"rank_s.0", 1.0}, {"rank_s.1", nullptr}}}}};
  const nlohmann::json manifest = {{"rank_hosts", {"n0", "n1", "n2"}}};
  const auto rows = sp::rank_spreads(bench, manifest);
  ASSERT_EQ(rows.size(), 1u);  // p=2 has a rank without a time: not judged
  const auto& r = rows[0];
  EXPECT_EQ(r.key, "t/v/p=1");
  EXPECT_EQ(r.ranks, 3);
  EXPECT_EQ(r.slowest, 2);
  EXPECT_EQ(r.slow_host, "n2");
  EXPECT_EQ(r.fastest, 1);
  EXPECT_EQ(r.fast_host, "n1");
  EXPECT_EQ(r.others_median_s, 1.5);  // the median aggregate, not the first repetition
  EXPECT_EQ(r.excess, 4.0 / 1.5 - 1);
  EXPECT_NE(sp::ranks_markdown(rows).find("| 2 (n2) |"), std::string::npos);
}

}  // namespace
