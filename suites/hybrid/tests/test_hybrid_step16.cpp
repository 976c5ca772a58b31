// The hybrid step in 16-bit storage on one rank: schedules, ZeRO 0/1 and
// checkpointing give the same bits; memory and traffic are counted as the
// cost model predicts (2-byte parameters, activations and messages, 4-byte
// gradients, master weights and Adam moments: 18 bytes per parameter of
// model state at ZeRO 0); loss scaling skips a step with an overflow and
// keeps gradients below fp16's smallest subnormal that scale 1 loses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/hybrid/cost_model.hpp"
#include "kernels/hybrid/step.hpp"
#include "scaleproof/comm.hpp"
#include "suites/hybrid/hybrid_counts.hpp"
#include "suites/hybrid/tests/same_order_layouts.hpp"
#include "suites/hybrid/one_rank_step.hpp"

namespace {

using namespace sp::hybrid;
using sp::precision::bf16_t;
using sp::precision::fp16_t;

template <class S>
struct Outcome {
  std::vector<double> master, held;
  bool counts_match = false;
  int skipped = 0;
  double scale = 0;
};

// The initial loss scale of these tests: 2^10. With 2^16 the fp16 activation
// gradients of this model exceed 65504 and the first step is skipped (the
// scaler working as it should, but then nothing would be compared).
sp::precision::ScalerConfig test_scaler() {
  sp::precision::ScalerConfig c;
  c.init_scale = 1024;
  return c;
}

template <class S>
Outcome<S> run(const ModelShape& m, Layout l, int steps, const sp::precision::ScalerConfig& sc = test_scaler(),
               double weight = 1, int inject_at = -1) {
  l.storage = storage_of<S>();
#ifdef SP_HAVE_MPI
  HybridStep<S> st(m, l, 0, sp::comm::self());
#else
  HybridStep<S> st(m, l, 0);
#endif
  st.set_scaler(sc);
  st.set_loss_weight(weight);
  st.load();
  for (int s = 0; s < steps; ++s) {
    if (s == inject_at) st.inject_nonfinite();
    st.step();
  }
  Outcome<S> r;
  st.for_each_master([&](int, const ParamPos&, double v) { r.master.push_back(v); });
  st.for_each_held([&](int, const ParamPos&, double v) { r.held.push_back(v); });
  const Counted got = counted(st.memory(), st.counters(), steps);
  const Counted pred = predicted(m, l, 0);
  r.counts_match = got.values == pred.values;
  for (size_t k = 0; k < got.values.size(); ++k)
    if (got.values[k] != pred.values[k])
      ADD_FAILURE() << got.names[k] << " " << got.values[k] << " != " << pred.values[k];
  r.skipped = st.skipped_steps();
  r.scale = st.scaler().scale();
  return r;
}

size_t bits_differ(const std::vector<double>& a, const std::vector<double>& b) {
  size_t d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += std::memcmp(&a[i], &b[i], sizeof(double)) != 0;
  return d + (a.size() > b.size() ? a.size() - b.size() : b.size() - a.size());
}

ModelShape small_model() {
  ModelShape m;
  m.layers = 4, m.hidden = 16, m.heads = 4, m.seq = 5, m.global_batch = 4;
  return m;
}

// Schedules, ZeRO 0 / 1 and checkpointing change when and where operations
// run, never the operations or their order: 16-bit results are bitwise equal.
template <class S>
void invariant() {
  const ModelShape m = small_model();
  Layout base;
  base.micro_batches = 2, base.schedule = sp::mp::ScheduleKind::gpipe;
  const Outcome<S> want = run<S>(m, base, 3);
  EXPECT_TRUE(want.counts_match);
  EXPECT_EQ(want.skipped, 0);
  for (const Layout& l : same_order_layouts(base)) {
    const Outcome<S> got = run<S>(m, l, 3);
    EXPECT_TRUE(got.counts_match);
    EXPECT_EQ(bits_differ(got.master, want.master), 0u) << sp::mp::to_string(l.schedule) << " zero " << l.zero_stage;
    EXPECT_EQ(bits_differ(got.held, want.held), 0u);
  }
  // ZeRO 2 and 3 form each micro-batch's gradient from zero and add it to
  // the accumulator; ZeRO 0 and 1 let the GEMM add into the accumulator,
  // which gives the same sums only while the GEMM adds its whole K sum to C
  // at once (kernels/gemm's K blocking). So they are compared with the
  // one-rank step of their own stage (the matrix), and here only counted.
  for (int z : {2, 3}) {
    Layout l = base;
    l.zero_stage = z;
    const Outcome<S> got = run<S>(m, l, 3);
    EXPECT_TRUE(got.counts_match) << "zero " << z;
  }
  // Every parameter moved: the steps ran (a skipped step would leave them).
  Layout l = base;
  l.storage = storage_of<S>();
  std::vector<double> start;
  {
    HybridStep<S> st(m, l, 0);
    st.set_scaler(test_scaler());
    st.load();
    st.for_each_master([&](int, const ParamPos&, double v) { start.push_back(v); });
  }
  size_t moved = 0;
  for (size_t i = 0; i < start.size(); ++i) moved += start[i] != want.master[i];
  EXPECT_EQ(moved, start.size());
}

TEST(HybridStep16, Fp16IsBitwiseInvariantUnderScheduleZero01AndCheckpointing) {
  if (sp::comm::size() != 1) GTEST_SKIP() << "a one-rank test";
  invariant<fp16_t>();
}
TEST(HybridStep16, Bf16IsBitwiseInvariantUnderScheduleZero01AndCheckpointing) {
  if (sp::comm::size() != 1) GTEST_SKIP() << "a one-rank test";
  invariant<bf16_t>();
}

// Megatron's 18 bytes per parameter: 2 (16-bit weights) + 4 (fp32
// gradients) + 12 (fp32 master, Adam m and v); the cost model and the
// counted step agree (run() checks every category), and ZeRO 1 shards the
// 12 bytes over the replicas.
TEST(HybridStep16, ModelStatesAreEighteenBytesPerParameter) {
  const ModelShape m = small_model();
  Layout l;
  l.storage = StorageType::bf16;
  const MemoryByCategory mem = predict_memory(m, l, 0);
  const double P = double(m.layers) * double(block_shape(m, l).elems());
  EXPECT_EQ(mem.params, 2 * P);
  EXPECT_EQ(mem.grads, 4 * P);
  EXPECT_EQ(mem.optimizer, 12 * P);
  l.dp = 2, l.zero_stage = 1;
  const MemoryByCategory z1 = predict_memory(m, l, 0);
  EXPECT_EQ(z1.optimizer, 12 * std::ceil(P / 2));
  EXPECT_TRUE(run<fp16_t>(m, Layout{}, 1).counts_match);
}

// An overflow skips the step: parameters and working copy unchanged, S
// halved, the following steps run again.
template <class S>
void overflow() {
  const ModelShape m = small_model();
  Layout l;
  l.micro_batches = 2;
  const Outcome<S> one = run<S>(m, l, 1);
  const Outcome<S> skipped = run<S>(m, l, 2, test_scaler(), 1, 1);  // step 2 sees an inf
  EXPECT_EQ(one.skipped, 0);
  EXPECT_EQ(skipped.skipped, 1);
  EXPECT_EQ(skipped.scale, test_scaler().init_scale / 2);
  EXPECT_EQ(bits_differ(skipped.master, one.master), 0u);
  EXPECT_EQ(bits_differ(skipped.held, one.held), 0u);
  const Outcome<S> after = run<S>(m, l, 3, test_scaler(), 1, 1);
  EXPECT_EQ(after.skipped, 1);
  EXPECT_GT(bits_differ(after.master, one.master), 0u);
}
TEST(HybridStep16, Fp16OverflowSkipsTheStepAndHalvesTheScale) { overflow<fp16_t>(); }
TEST(HybridStep16, Bf16OverflowSkipsTheStepAndHalvesTheScale) { overflow<bf16_t>(); }

// Loss weight 2^-24 with B = 4: the loss gradient w (y - t) / B is about
// 2^-26 |y - t|, below fp16's smallest subnormal 2^-24 for |y - t| < 2 (and
// rounded to 0 below 2^-25). Scaled by 2^16 it is a normal fp16 number, and
// every gradient the fp32 step finds nonzero is nonzero in fp16: the set of
// parameters one Adam step moves is the fp32 step's. With scale 1 the loss
// gradients flush to zero and that comparison fails.
TEST(HybridStep16, Fp16GradientBelowTheSmallestSubnormalSurvivesScaling) {
  const ModelShape m = small_model();
  Layout l;
  l.micro_batches = 2;
  const double w = 0x1p-24;
  std::vector<double> start, f32;
  {
    HybridStep<float> st(m, l, 0);
    st.set_loss_weight(w);
    st.load();
    st.for_each_master([&](int, const ParamPos&, double v) { start.push_back(v); });
    st.step();
    st.for_each_master([&](int, const ParamPos&, double v) { f32.push_back(v); });
  }
  auto moved = [&](const std::vector<double>& after) {
    std::vector<bool> mv(after.size());
    for (size_t i = 0; i < after.size(); ++i) mv[i] = after[i] != start[i];
    return mv;
  };
  const std::vector<bool> want = moved(f32);
  size_t n_want = 0;
  for (bool b : want) n_want += b;
  EXPECT_GT(n_want, want.size() / 2);
  sp::precision::ScalerConfig scaled, unscaled;  // 2^16 and 1
  unscaled.init_scale = 1;
  const Outcome<fp16_t> s16 = run<fp16_t>(m, l, 1, scaled, w);
  const Outcome<fp16_t> s1 = run<fp16_t>(m, l, 1, unscaled, w);
  EXPECT_EQ(s16.skipped, 0);
  EXPECT_EQ(s1.skipped, 0);
  EXPECT_TRUE(moved(s16.master) == want) << "scale 2^16 must keep every gradient the fp32 step has";
  EXPECT_FALSE(moved(s1.master) == want) << "scale 1 must lose the gradients below 2^-24";
  size_t n16 = 0, n1 = 0;
  for (bool b : moved(s16.master)) n16 += b;
  for (bool b : moved(s1.master)) n1 += b;
  std::printf("parameters moved: fp32 %zu, fp16 scale 2^16 %zu, fp16 scale 1 %zu of %zu\n", n_want, n16, n1,
              want.size());
}

}  // namespace
