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

TEST(HistoryGate, MedianCallsJudgedWhenEveryRunHasThem) {
  // Means per call lifted by preempted calls (3.0) while the median calls stay near 1: no regression.
  auto with_calls = [](double median, double call_median) {
    sp::db::TrendPoint p = point("a", median);
    p.t.calls = true;
    p.t.call_median = call_median;
    return p;
  };
  std::vector<sp::db::TrendPoint> pts = {with_calls(1.0, 1.0), with_calls(1.0, 1.1), with_calls(3.0, 1.05)};
  auto v = sp::db::judge_trend(pts, 5, 0.1);
  ASSERT_TRUE(v.judged);
  EXPECT_TRUE(v.calls);
  EXPECT_DOUBLE_EQ(v.reference, 1.05);  // median of 1.0 and 1.1
  EXPECT_EQ(v.last, 1.05);
  EXPECT_FALSE(v.regression);
  // A median call 1.5x the reference is one.
  pts.back().t.call_median = 1.575;
  EXPECT_TRUE(sp::db::judge_trend(pts, 5, 0.1).regression);
  // One run of the window without the statistics: the medians over repetitions, 3.0 against 1.0.
  pts.front().t.calls = false;
  v = sp::db::judge_trend(pts, 5, 0.1);
  EXPECT_FALSE(v.calls);
  EXPECT_EQ(v.ratio, 3.0);
  EXPECT_TRUE(v.regression);
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

TEST(Stragglers, RankSecondsOfTheRepetitionsTheirMedianPerRank) {
  // The measurement service's rank_seconds per repetition; the older counters of the same case are not read.
  const nlohmann::json bench = {
      {"benchmarks",
       {{{"run_name", "f/t/v/p=1/manual_time"}, {"run_type", "iteration"}, {"rank_seconds", {1.0, 3.0, 2.0}}},
        {{"run_name", "f/t/v/p=1/manual_time"}, {"run_type", "iteration"}, {"rank_seconds", {1.2, 1.0, 9.0}}},
        {{"run_name", "f/t/v/p=1/manual_time"}, {"run_type", "iteration"}, {"rank_seconds", {0.8, 1.1, 4.0}}},
        {{"run_name", "f/t/v/p=1/manual_time"},
         {"run_type", "aggregate"},
         {"aggregate_name", "median"},
         {"rank_s.0", 7.0},
         {"rank_s.1", 1.0},
         {"rank_s.2", 1.0}}}}};
  const auto rows = sp::rank_spreads(bench, {{"rank_hosts", {"n0", "n1", "n2"}}});
  ASSERT_EQ(rows.size(), 1u);
  const auto& r = rows[0];
  // Per rank, the median over repetitions: 1.0, 1.1, 4.0.
  EXPECT_EQ(r.slowest, 2);
  EXPECT_EQ(r.slow_host, "n2");
  EXPECT_EQ(r.slow_s, 4.0);
  EXPECT_EQ(r.fastest, 0);
  EXPECT_EQ(r.fast_s, 1.0);
  EXPECT_EQ(r.others_median_s, 0.5 * (1.0 + 1.1));
}

}  // namespace
