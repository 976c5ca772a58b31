// Single-process checks of the hybrid step's pieces: the parameter map
// covers every full-model element exactly once over the tensor-parallel
// ranks, the cost model's FLOPs are the GEMM list's, the bound of the
// reference is not vacuous, and a perturbed parameter is caught.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "kernels/hybrid/cost_model.hpp"
#include "kernels/hybrid/param_map.hpp"
#include "kernels/hybrid/step.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/measure.hpp"
#include "reference/hybrid/hybrid_ref.hpp"
#include "suites/hybrid/hybrid_counts.hpp"
#include "suites/hybrid/tests/same_order_layouts.hpp"
#include "suites/hybrid/hybrid_params.hpp"

namespace {

using namespace sp::hybrid;

TEST(HybridUnit, ParamMapCoversTheModelOnceOverTensorRanks) {
  ModelShape m;
  m.hidden = 8, m.heads = 4;
  Layout l;
  l.tp = 2;
  const BlockShape k = block_shape(m, l);
  std::set<std::tuple<int, int64_t, int64_t>> seen;
  std::set<std::tuple<int, int64_t, int64_t>> replicated;
  for (int r = 0; r < l.tp; ++r)
    for (int64_t off = 0; off < k.elems(); ++off) {
      const ParamPos p = param_pos(k, l.tp, r, off);
      const auto key = std::make_tuple(int(p.t), p.i, p.j);
      const bool ln = p.t == Tensor::ln1_g || p.t == Tensor::ln1_b || p.t == Tensor::ln2_g || p.t == Tensor::ln2_b;
      if (ln)
        replicated.insert(key);
      else
        EXPECT_TRUE(seen.insert(key).second) << "element held twice";
    }
  const size_t h = 8, f = 32;
  EXPECT_EQ(seen.size(), 4 * h * h + 2 * h * f);
  EXPECT_EQ(replicated.size(), 4 * h);
}

TEST(HybridUnit, FlopsAreTheGemmList) {
  ModelShape m;
  m.layers = 4, m.hidden = 16, m.heads = 4, m.seq = 8, m.global_batch = 8;
  Layout l;
  l.tp = 2, l.pp = 2, l.micro_batches = 2, l.ckpt_every = 1;
  double sum = 0;
  for (const auto& g : gemm_shapes(m, l, 1)) sum += g.flops();
  EXPECT_EQ(sum, predict_flops(m, l, 0));
}

TEST(HybridUnit, ReferenceBoundIsSmallAndAPerturbationIsCaught) {
  ModelShape m;
  m.layers = 2, m.hidden = 8, m.heads = 2, m.seq = 4, m.global_batch = 4;
  const ref::Model w = ref::train<double>(m, 1);
  // Where a gradient's sign is not decided by its bound, Adam's first
  // update (about lr sign(g)) is only bounded by the cap 2 lr R_1 = 2 lr;
  // elsewhere the bound must be far below one step (lr = 1e-2), so that a
  // parameter moved by a step's worth, or not moved, is caught.
  size_t tight = 0, all = 0;
  for (const auto& [key, mat] : w)
    for (const auto& e : mat.a) {
      ++all;
      tight += e.e < 1e-4 ? 1 : 0;
    }
  std::printf("elements with bound < 1e-4: %zu of %zu\n", tight, all);
  EXPECT_GT(double(tight), 0.95 * double(all));
  const ref::Matrix& wq = w.at({0, Tensor::wq});
  size_t caught = 0;
  for (int i = 0; i < wq.rows; ++i)
    for (int j = 0; j < wq.cols; ++j) {
      const double start = init_value(0, Tensor::wq, i, j, m.hidden);
      caught += std::fabs(start - double(wq(i, j).v)) > double(wq(i, j).e) ? 1 : 0;
    }
  EXPECT_GT(double(caught), 0.95 * double(wq.a.size())) << "an unchanged parameter would pass";
}

TEST(HybridUnit, CaseErrorsAreOneLine) {
  sp::Params p{{"layers", "2"},      {"hidden", "8"}, {"heads", "2"},      {"seq", "4"},  {"batch", "12"},
               {"dp", "0"},          {"tp", "1"},     {"pp", "1"},         {"v", "1"},    {"mb", "1"},
               {"schedule", "1f1b"}, {"zero", "0"},   {"storage", "fp32"}, {"ckpt", "0"}, {"steps", "1"}};
  EXPECT_EQ(case_error(p, 1), "");
  EXPECT_EQ(case_error(p, 5), "layout: global_batch 12 is not divisible by dp x micro_batches = 5");
  p.set("tp", 2);
  EXPECT_NE(case_error(p, 3).find("does not divide"), std::string::npos);
}

}  // namespace

namespace {

using namespace sp::hybrid;

// fp32 parameters after `steps` steps at one rank, and whether the counts
// match the cost model (element size 4).
std::vector<float> run_fp32(const ModelShape& m, const Layout& l, int steps, bool& counts_match) {
  HybridStep<float> st(m, l, 0);
  st.load();
  for (int s = 0; s < steps; ++s) st.step();
  std::vector<float> out;
  st.for_each_held([&](int, const ParamPos&, double v) { out.push_back(float(v)); });
  const Counted got = counted(st.memory(), st.counters(), steps);
  const Counted pred = predicted(m, l, 0);
  counts_match = got.values == pred.values;
  return out;
}

// The schedule, ZeRO stage 0 or 1 and checkpointing change when and where
// operations run, not the order of any sum, so at one rank (one replica,
// micro-batch gradients accumulated in micro-batch order) fp32 results are
// bitwise equal across them; the counted quantities match the cost model in
// fp32 too.
TEST(HybridUnit, Fp32IsBitwiseInvariantUnderScheduleZero01AndCheckpointing) {
  if (sp::comm::size() != 1) GTEST_SKIP() << "a one-rank test";
  ModelShape m;
  m.layers = 4, m.hidden = 16, m.heads = 4, m.seq = 5, m.global_batch = 4;
  Layout base;
  base.micro_batches = 2, base.schedule = sp::mp::ScheduleKind::gpipe;
  bool match = false;
  const std::vector<float> want = run_fp32(m, base, 3, match);
  EXPECT_TRUE(match);
  for (const Layout& l : same_order_layouts(base)) {
    const std::vector<float> got = run_fp32(m, l, 3, match);
    EXPECT_TRUE(match);
    ASSERT_EQ(got.size(), want.size());
    size_t differ = 0;
    for (size_t i = 0; i < got.size(); ++i) differ += std::memcmp(&got[i], &want[i], sizeof(float)) != 0;
    EXPECT_EQ(differ, 0u) << sp::mp::to_string(l.schedule) << " zero " << l.zero_stage << " ckpt " << l.ckpt_every;
  }
}

// The step's two timed parts (F and B operations; the optimizer phase after
// the schedule) are parts of its calls: each positive, together no more
// than the calls' own time on the harness's clock, and start_counting()
// sets both back to zero.
TEST(HybridUnit, BusyAndOptimizerSecondsArePartsOfTheStep) {
  if (sp::comm::size() != 1) GTEST_SKIP() << "a one-rank test";
  ModelShape m;
  m.layers = 4, m.hidden = 16, m.heads = 4, m.seq = 5, m.global_batch = 4;
  Layout l;
  l.micro_batches = 2, l.zero_stage = 1;
  HybridStep<float> st(m, l, 0);
  st.load();
  sp::PhaseClock clock;
  for (int s = 0; s < 3; ++s) clock.time("step", [&] { st.step(); });
  const StepCounters c = st.counters();
  EXPECT_GT(c.busy_seconds, 0.0);
  EXPECT_GT(c.optimizer_seconds, 0.0);
  EXPECT_LE(c.busy_seconds + c.optimizer_seconds, clock.total("step"));
  st.start_counting();
  EXPECT_EQ(st.counters().busy_seconds, 0.0);
  EXPECT_EQ(st.counters().optimizer_seconds, 0.0);
}

}  // namespace
