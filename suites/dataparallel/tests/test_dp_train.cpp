// The Kokkos data-parallel trainer at one rank against the plain-loop
// reference, and proof that the reference's error bound is tight enough to
// catch real mistakes (a learning rate off by 1e-6, a gradient off by a factor
// of 4); validation of bad shapes; the IMB-NBC overlap formula.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/dataparallel/dp_trainer.hpp"
#include "reference/dataparallel/mlp_reference.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"
#include "suites/dataparallel/dp_predictions.hpp"

using namespace sp::dp;

namespace {

struct Outcome {
  long long checked = 0, wrong = 0;
  double p90_bound_over_step = 0;  // 90th percentile of bound / how far the parameter moved
};

// Trains `variant` at one rank with `kernel_cfg` and compares with the
// reference trained with `ref_cfg`.
template <class T>
Outcome train_and_compare(const std::string& variant, AdamConfig kernel_cfg, AdamConfig ref_cfg, int steps = 3) {
  const MlpShape s = MlpShape::make(6, 10, 2, 3);
  const int B = 12;
  auto theta0 = initial_params<T>(s);
  auto X = batch_inputs<T>(s, B), Y = batch_targets<T>(s, B);
  sp::comm::SelfTransport t;
  DpTrainer<T> tr(s, B, kernel_cfg, parse_variant(variant), t);
  tr.load(theta0, X, Y);
  for (int k = 0; k < steps; ++k) tr.step();
  auto ref = ref::train<T>(s, B, steps, ref_cfg, theta0, X, Y, sp::unit_roundoff<T>());
  sp::Comparator cmp("reference bound");
  Outcome o;
  std::vector<double> rel;
  for (auto& [i, v] : tr.held_params()) {
    cmp.add(v, static_cast<double>(ref.theta[i]), ref.bound[i]);
    rel.push_back(ref.bound[i] / std::fabs(static_cast<double>(ref.theta[i]) - theta0[i]));
  }
  std::sort(rel.begin(), rel.end());
  o.p90_bound_over_step = rel[rel.size() * 9 / 10];
  o.checked = cmp.result().checked, o.wrong = cmp.result().wrong;
  return o;
}

}  // namespace

TEST(DpTrain, EveryVariantMatchesReferenceAtOneRank) {
  for (auto& v : variant_names()) {
    auto o64 = train_and_compare<double>(v, {}, {});
    EXPECT_GT(o64.checked, 0) << v;
    EXPECT_EQ(o64.wrong, 0) << v << " fp64";
    auto o32 = train_and_compare<float>(v, {}, {});
    EXPECT_EQ(o32.wrong, 0) << v << " fp32";
  }
}

TEST(DpTrain, BoundIsSmallAgainstTheUpdate) {
  // A bound as large as the parameters' movement would accept anything. The
  // bound grows about 10x per Adam step (Adam divides by |g|), which is why
  // the fp32 conformance case trains 2 steps and the fp64 one 3.
  EXPECT_LT(train_and_compare<double>("ddp", {}, {}, 3).p90_bound_over_step, 1e-6);
  EXPECT_LT(train_and_compare<float>("ddp", {}, {}, 2).p90_bound_over_step, 0.1);
}

TEST(DpTrain, CatchesLearningRateOffByOnePpm) {
  AdamConfig wrong;
  wrong.lr *= 1 + 1e-6;
  EXPECT_GT(train_and_compare<double>("zero3", wrong, {}).wrong, 0);
}

TEST(DpTrain, CatchesGradientOffByFactorFour) {
  // Adam is scale invariant except through eps: a gradient scaled by 1/4 (a mean
  // instead of a sum over 4 ranks) trains exactly like eps x 4.
  AdamConfig scaled;
  scaled.eps *= 4;
  EXPECT_GT(train_and_compare<double>("zero1", scaled, {}).wrong, 0);
}

TEST(DpTrain, RejectsBadShapes) {
  auto* r = sp::Registry::get().find("dp_train");
  ASSERT_NE(r, nullptr);
  auto t = r->make();
  auto base = [] {
    return sp::Params{{"dtype", "fp32"}, {"in", "4"},     {"width", "3"}, {"depth", "1"},
                      {"out", "1"},      {"batch", "12"}, {"steps", "2"}};
  };
  EXPECT_NO_THROW(t->validate(base(), 4));
  EXPECT_THROW(t->validate(base(), 5), sp::InputError);  // 12 samples over 5 ranks
  EXPECT_THROW(t->validate(base().set("batch", "13"), 2), sp::InputError);
  EXPECT_THROW(t->validate(base(), 6), sp::InputError);  // the last layer has 3+1 = 4 parameters
  EXPECT_THROW(t->validate(base().set("depth", "0"), 1), sp::InputError);
  EXPECT_THROW(t->validate(base().set("width", "-3"), 1), sp::InputError);
  EXPECT_THROW(t->validate(base().set("dtype", "fp16"), 1), sp::InputError);
}

TEST(DpTrain, DdpBucketsFollowBackwardOrderWithinCap) {
  const MlpShape s = MlpShape::make(6, 10, 2, 3);  // blocks: 70, 110, 33 parameters
  auto b = s.buckets(143);                         // 33 + 110 fit, 70 more would not
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].lo, 2);
  EXPECT_EQ(b[0].hi, 3);
  EXPECT_EQ(b[1].lo, 1);
  EXPECT_EQ(b[1].hi, 1);
  EXPECT_EQ(s.buckets(0).size(), 3u);    // one layer per bucket
  EXPECT_EQ(s.buckets(100).size(), 3u);  // a layer above the cap is a bucket alone
  EXPECT_EQ(s.buckets(1000).size(), 1u);
}

TEST(DpTrain, MemoryTrackerKeepsPeaks) {
  MemoryTracker m;
  m.add(Mem::grads, 100);
  m.add(Mem::params, 50);
  m.sub(Mem::grads, 100);
  m.add(Mem::grads, 30);
  EXPECT_EQ(m.peak(Mem::grads), 100);
  EXPECT_EQ(m.current(Mem::grads), 30);
  EXPECT_EQ(m.peak_total(), 150);
  m.reset_peaks();
  EXPECT_EQ(m.peak(Mem::grads), 30);
  EXPECT_EQ(m.peak_total(), 80);
}

TEST(DpTrain, ImbNbcOverlapFormula) {
  EXPECT_DOUBLE_EQ(imb_nbc_overlap_pct(1, 1, 1), 100);   // fully hidden
  EXPECT_DOUBLE_EQ(imb_nbc_overlap_pct(1, 1, 2), 0);     // serialized
  EXPECT_DOUBLE_EQ(imb_nbc_overlap_pct(1, 2, 2.5), 50);  // half of the shorter one hidden
  EXPECT_DOUBLE_EQ(imb_nbc_overlap_pct(1, 1, 3), 0);     // slower than serial: clamped
}
