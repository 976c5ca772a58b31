// The time model on explicit work descriptions (no cost model): each term,
// the bubble's stretch of the pipelined phase, and agreement with the
// collectives family's alpha-beta-gamma formula of a ring all-reduce.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/collectives/model.hpp"
#include "kernels/hybrid/time_model.hpp"
#include "scaleproof/compare.hpp"

namespace {

using namespace sp::hybrid;
using K = sp::mp::ScheduleKind;
const double u = sp::unit_roundoff<double>();

MachineFigures machine() {
  MachineFigures m;
  m.gemm_flops = 1e12;
  m.tp = {2e-6, 1e-10, 5e-11};
  m.dp = {5e-6, 4e-10, 1e-10};
  m.pp = {3e-6, 2e-10, 0};
  return m;
}

StepWork work() {
  StepWork w;
  w.flops = 3e12;
  w.tp = {24, 6e8, 3e8};
  w.dp = {6, 2e9, 1e9};
  w.pp_messages = 16;
  w.pp_bytes = 4e8;
  return w;
}

TEST(PlanTimeModel, EachTermIsItsAlphaBetaGammaSum) {
  const MachineFigures mf = machine();
  const StepWork w = work();
  const StepTime t = predict_step_time(w, mf);  // p = 1: no bubble
  // Same operations in the same order: bitwise.
  EXPECT_EQ(t.compute, 3e12 / 1e12);
  EXPECT_EQ(t.tp, 24 * 2e-6 + 6e8 * 1e-10 + 3e8 * 5e-11);
  EXPECT_EQ(t.dp, 6 * 5e-6 + 2e9 * 4e-10 + 1e9 * 1e-10);
  EXPECT_EQ(t.pp, 16 * 3e-6 + 4e8 * 2e-10);
  EXPECT_EQ(t.bubble_fraction, 0.0);
  EXPECT_EQ(t.bubble, 0.0);
  EXPECT_EQ(t.total, (t.compute + t.tp + t.pp) + t.dp);
  EXPECT_EQ(t.comm_share(), (t.tp + t.pp + t.dp) / t.total);
}

TEST(PlanTimeModel, BubbleStretchesThePipelinedPhaseByThePaperRatio) {
  const MachineFigures mf = machine();
  for (auto [k, p, m, v] : {std::tuple{K::gpipe, 4, 4, 1}, std::tuple{K::one_f_one_b, 8, 32, 1},
                            std::tuple{K::interleaved, 4, 8, 2}, std::tuple{K::interleaved, 8, 16, 4}}) {
    StepWork w = work();
    w.schedule = k, w.p = p, w.m = m, w.v = v;
    const StepTime t = predict_step_time(w, mf);
    const double busy = t.compute + t.tp + t.pp;
    // Pipelined phase = busy (1 + (p-1)/(v m)) (Narayanan et al.); the model
    // computes busy / (1 - f) with f = (p-1)/(v m + p - 1): a few roundings apart.
    const double want = busy * (1 + (p - 1.0) / (v * m)) + t.dp;
    EXPECT_LE(std::fabs(t.total - want), sp::gamma_n(6, u) * want) << p << " " << m << " " << v;
    EXPECT_LE(std::fabs(t.bubble - busy * (p - 1.0) / (v * m)), sp::gamma_n(6, u) * want);
    EXPECT_GT(t.bubble, 0.0);
  }
}

TEST(PlanTimeModel, RingAllReduceMatchesTheCollectivesModel) {
  const sp::coll::AlphaBetaGamma abg{3e-6, 2.5e-10, 1.5e-10};
  const Link link{abg.alpha, abg.beta, abg.gamma};
  for (int g : {2, 3, 4, 8, 64})
    for (double n : {1024.0, 1e6, 3e9}) {
      GroupWork w;
      w.latency_steps = 2.0 * (g - 1);
      w.bytes_sent = 2.0 * (g - 1) / g * n;
      w.bytes_reduced = (g - 1.0) / g * n;
      const double want = sp::coll::predict_seconds("all_reduce", "ring", g, n, abg);
      EXPECT_LE(std::fabs(group_seconds(w, link) - want), sp::gamma_n(8, u) * want) << g << " " << n;
    }
}

TEST(PlanTimeModel, MoreWorkNeverTakesLess) {
  const MachineFigures mf = machine();
  StepWork w = work();
  w.schedule = K::one_f_one_b, w.p = 4, w.m = 8;
  const double base = predict_step_time(w, mf).total;
  StepWork more = w;
  more.flops *= 2;
  EXPECT_GT(predict_step_time(more, mf).total, base);
  more = w;
  more.m = 16;  // same work in more micro-batches: a smaller bubble
  EXPECT_LT(predict_step_time(more, mf).total, base);
}

}  // namespace
