// The time model on explicit work descriptions (no cost model): each term,
// the bubble's stretch of the pipelined phase, and agreement with the
// collectives family's alpha-beta-gamma formula of a ring all-reduce.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/collectives/algorithm.hpp"
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
  w.gemms = {{1000, 1000, 1500, 1000}};  // 2 x 1000 x 1000 x 1500 x 1000 = 3e12 FLOPs
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
  EXPECT_EQ(t.gemm, 3e12 / 1e12);
  EXPECT_EQ(t.elementwise, 0.0);  // no element-wise bandwidth: the term is left out
  EXPECT_EQ(t.compute, t.gemm);
  EXPECT_EQ(t.tp, 24 * 2e-6 + 6e8 * 1e-10 + 3e8 * 5e-11);
  EXPECT_EQ(t.dp, 6 * 5e-6 + 2e9 * 4e-10 + 1e9 * 1e-10);
  EXPECT_EQ(t.pp, 16 * 3e-6 + 4e8 * 2e-10);
  EXPECT_EQ(t.bubble_fraction, 0.0);
  EXPECT_EQ(t.bubble, 0.0);
  EXPECT_EQ(t.total, (t.compute + t.tp + t.pp) + t.dp);
  EXPECT_EQ(t.comm_share(), (t.tp + t.pp + t.dp) / t.total);
}

TEST(PlanTimeModel, AMeasuredAttentionCoreReplacesItsProductsAndSoftmaxBytes) {
  MachineFigures mf = machine();  // 1e12 FLOP/s for every shape
  mf.elementwise_bw = 5e10;
  StepWork w;
  // 3 forward and 2 backward calls over 2 samples x 4 heads = 8 matrices:
  // 8 x (3 + 2) = 40 products of 64 x 64 x 32 as A B^T (Q K^T, dO V^T),
  // 8 x (3 + 2) = 40 of 64 x 32 x 64 as A B (P V, dS K) and 8 x 2 x 2 = 32
  // as A^T B (dS^T Q, P^T dO); that shape 10 more times as A B outside the
  // core.
  w.attention = {2, 64, 4, 32, 3, 2, 1e6};
  w.gemms = {{64, 32, 64, 50, GemmOps::nn},
             {64, 32, 64, 32, GemmOps::tn},
             {64, 64, 32, 40, GemmOps::nt},
             {512, 128, 128, 48, GemmOps::nn}};
  w.elementwise_bytes = 3e8;
  const StepTime plain = predict_step_time(w, mf);  // not measured: the core's products and bytes stay
  EXPECT_EQ(plain.attention, 0.0);
  EXPECT_DOUBLE_EQ(plain.gemm, total_flops(w) / 1e12);
  EXPECT_EQ(plain.elementwise, 3e8 / 5e10);
  mf.attention_seconds[{2, 64, 4, 32}] = {1e-3, 2.5e-3};
  mf.attention_seconds[{1, 64, 4, 32}] = {1.0, 1.0};  // another shape: must not enter
  const StepTime t = predict_step_time(w, mf);
  EXPECT_EQ(t.attention, 3 * 1e-3 + 2 * 2.5e-3);
  EXPECT_DOUBLE_EQ(t.gemm, (2.0 * 64 * 32 * 64 * 10 + 2.0 * 512 * 128 * 128 * 48) / 1e12);
  EXPECT_EQ(t.elementwise, (3e8 - 1e6) / 5e10);
  EXPECT_EQ(t.compute, t.gemm + t.elementwise + t.attention);
  EXPECT_EQ(t.total, t.compute);
}

TEST(PlanTimeModel, ComputeIsEachShapeAtItsOwnRatePlusElementwiseBytesOverBandwidth) {
  MachineFigures mf = machine();  // 1e12 FLOP/s for shapes without their own rate
  mf.gemm_rate[{64, 64, 32, GemmOps::nn}] = 2e11;
  mf.gemm_rate[{512, 128, 128, GemmOps::nn}] = 8e11;
  mf.gemm_rate[{7, 7, 7, GemmOps::nn}] = 1;  // a shape the work does not run: must not enter
  mf.elementwise_bw = 5e10;
  StepWork w;
  w.gemms = {{64, 64, 32, 128}, {512, 128, 128, 48}, {512, 512, 128, 16}};
  w.elementwise_bytes = 3e8;
  const StepTime t = predict_step_time(w, mf);
  // By hand: count 2 M N K / rate per shape, in the work's order.
  const double g1 = 2.0 * 64 * 64 * 32 * 128 / 2e11;    // 33554432 FLOPs at 2e11
  const double g2 = 2.0 * 512 * 128 * 128 * 48 / 8e11;  // 805306368 FLOPs at 8e11
  const double g3 = 2.0 * 512 * 512 * 128 * 16 / 1e12;  // 1073741824 FLOPs at the uniform rate
  EXPECT_EQ(t.gemm, (0.0 + g1 + g2) + g3);
  EXPECT_DOUBLE_EQ(t.gemm, 33554432.0 / 2e11 + 805306368.0 / 8e11 + 1073741824.0 / 1e12);
  EXPECT_EQ(t.elementwise, 3e8 / 5e10);
  EXPECT_EQ(t.compute, t.gemm + t.elementwise);
  EXPECT_EQ(t.total, t.compute + t.tp + t.pp + t.dp);  // p = 1, empty groups: compute alone
  EXPECT_EQ(total_flops(w), (0.0 + 33554432.0 + 805306368.0) + 1073741824.0);
  // The single-rate model of the named figures: every shape at gemm_flops.
  MachineFigures one = machine();
  one.elementwise_bw = 0;
  EXPECT_EQ(predict_step_time(w, one).elementwise, 0.0);
  EXPECT_DOUBLE_EQ(predict_step_time(w, one).gemm, total_flops(w) / 1e12);
}

TEST(PlanTimeModel, TheOptimizerPhaseFollowsThePipelineAtItsOwnBandwidth) {
  MachineFigures mf = machine();
  mf.elementwise_bw = 5e10;
  StepWork w = work();
  w.schedule = K::one_f_one_b, w.p = 4, w.m = 4, w.v = 1;  // f = 3/7
  const StepTime before = predict_step_time(w, mf);
  EXPECT_EQ(before.optimizer, 0.0);
  w.optimizer_bytes = 2e8;
  // Without a bandwidth of its own the element-wise one stands in.
  const StepTime t = predict_step_time(w, mf);
  EXPECT_EQ(t.optimizer, 2e8 / 5e10);
  mf.optimizer_bw = 1e10;
  const StepTime o = predict_step_time(w, mf);
  EXPECT_EQ(o.optimizer, 2e8 / 1e10);
  // After the pipeline drains: added once, not stretched by the bubble.
  EXPECT_EQ(o.bubble, before.bubble);
  EXPECT_EQ(o.total, before.total + o.optimizer);
  // No bandwidth at all (named figures): left out.
  MachineFigures none = machine();
  EXPECT_EQ(predict_step_time(w, none).optimizer, 0.0);
  // The schedule's ZeRO shard passes stream at the same bandwidth, inside
  // the element-wise term (and so the pipelined phase).
  w.shard_bytes = 3e7;
  const StepTime sh = predict_step_time(w, mf);
  EXPECT_EQ(sh.elementwise, o.elementwise + 3e7 / 1e10);
  EXPECT_GT(sh.bubble, o.bubble);
  EXPECT_EQ(predict_step_time(w, none).elementwise, 0.0);
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
  const sp::coll::Algorithm* ring = sp::coll::find_algorithm(sp::coll::Coll::all_reduce, "ring");
  ASSERT_NE(ring, nullptr);
  for (int g : {2, 3, 4, 8, 64})
    for (double n : {1024.0, 1e6, 3e9}) {
      GroupWork w;
      w.latency_steps = 2.0 * (g - 1);
      w.bytes_sent = 2.0 * (g - 1) / g * n;
      w.bytes_reduced = (g - 1.0) / g * n;
      const double want = sp::coll::predict_seconds(*ring, g, n, abg);
      EXPECT_LE(std::fabs(group_seconds(w, link) - want), sp::gamma_n(8, u) * want) << g << " " << n;
    }
}

TEST(PlanTimeModel, MoreWorkNeverTakesLess) {
  const MachineFigures mf = machine();
  StepWork w = work();
  w.schedule = K::one_f_one_b, w.p = 4, w.m = 8;
  const double base = predict_step_time(w, mf).total;
  StepWork more = w;
  more.gemms[0].count *= 2;
  EXPECT_GT(predict_step_time(more, mf).total, base);
  more = w;
  more.m = 16;  // same work in more micro-batches: a smaller bubble
  EXPECT_LT(predict_step_time(more, mf).total, base);
}

}  // namespace
