// The conformance matrix of the hybrid step at the process's rank count W:
// for each chosen factorisation W = dp x tp x pp a tiny model and a layout
// that rotate through the schedules, ZeRO stages, checkpointing and 1 or 3
// steps. On every rank: each parameter it holds equals the single-rank
// reference within the reference's running error bound, and every counted
// quantity (memory per category at its peak, bytes and collectives per
// group, pipeline messages) equals the cost model's prediction for that rank.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kernels/hybrid/cost_model.hpp"
#include "kernels/hybrid/step.hpp"
#include "reference/hybrid/hybrid_ref.hpp"
#include "scaleproof/comm.hpp"
#include "suites/hybrid/hybrid_counts.hpp"

namespace {

using namespace sp::hybrid;

struct Case {
  ModelShape m;
  Layout l;
  int steps;
  std::string name() const {
    return "dp" + std::to_string(l.dp) + " tp" + std::to_string(l.tp) + " pp" + std::to_string(l.pp) + " " +
           sp::mp::to_string(l.schedule) + " v" + std::to_string(l.v) + " mb" + std::to_string(l.micro_batches) +
           " zero" + std::to_string(l.zero_stage) + " ckpt" + std::to_string(l.ckpt_every) + " steps" +
           std::to_string(steps);
  }
};

// Factorisations of W: all of them up to 4 ranks; from 5 on (slow on a small
// machine) pure dp, pure tp, pure pp and the most balanced mixed one.
std::vector<GridCoord> factorisations(int W) {
  std::vector<GridCoord> all;
  for (int tp = 1; tp <= W; ++tp)
    for (int pp = 1; pp * tp <= W; ++pp)
      if (W % (tp * pp) == 0) all.push_back({W / (tp * pp), tp, pp});
  if (W <= 4) return all;
  std::vector<GridCoord> out = {{W, 1, 1}, {1, W, 1}, {1, 1, W}};
  GridCoord best{W, 1, 1};
  auto spread = [](const GridCoord& c) { return std::max({c.dp, c.tp, c.pp}); };
  for (const auto& c : all)
    if ((c.dp > 1) + (c.tp > 1) + (c.pp > 1) >= 2 && (spread(best) == W || spread(c) < spread(best))) best = c;
  if (spread(best) < W) out.push_back(best);
  return out;
}

Case make_case(const GridCoord& f, int index) {
  static const sp::mp::ScheduleKind kinds[] = {sp::mp::ScheduleKind::one_f_one_b, sp::mp::ScheduleKind::gpipe,
                                               sp::mp::ScheduleKind::interleaved};
  Case c;
  c.l.dp = f.dp, c.l.tp = f.tp, c.l.pp = f.pp;
  c.l.storage = StorageType::fp64;
  c.l.schedule = kinds[index % 3];
  c.l.zero_stage = index % 4;
  c.l.v = c.l.schedule == sp::mp::ScheduleKind::interleaved ? 2 : 1;
  c.l.micro_batches = c.l.schedule == sp::mp::ScheduleKind::interleaved ? f.pp : 2;
  const int ckpt = (index / 2) % 3;  // 0, 0, 1, 1, 2, 2, ...
  const int per_chunk = ckpt == 2 ? 2 : 1 + (index % 2);
  c.l.ckpt_every = ckpt;
  c.m.layers = f.pp * c.l.v * per_chunk;
  c.m.heads = f.tp == 1 ? 2 : f.tp;
  c.m.hidden = 2 * c.m.heads;
  c.m.seq = 3 + index % 2;
  c.m.global_batch = f.dp * c.l.micro_batches;
  c.steps = index % 2 == 0 ? 1 : 3;
  return c;
}

TEST(HybridMatrix, EveryChosenFactorisationMatchesTheReferenceAndTheCostModel) {
  const int W = sp::comm::size(), me = sp::comm::rank();
  int index = W;  // the rotation starts at W so that each rank count sees other combinations
  for (const GridCoord& f : factorisations(W)) {
    const Case c = make_case(f, index++);
    ASSERT_EQ(layout_error(c.m, c.l, W), "") << c.name();
    SCOPED_TRACE(c.name() + " rank " + std::to_string(me));
    HybridStep<double> step(c.m, c.l, me);
    step.load();
    for (int s = 0; s < c.steps; ++s) step.step();
    const ref::Model want = ref::train<double>(c.m, c.steps);
    long long checked = 0, wrong = 0;
    double worst = 0;
    step.for_each_held([&](int layer, const ParamPos& p, double v) {
      const ref::E& e = want.at({layer, p.t})(int(p.i), int(p.j));
      const double err = std::fabs(v - double(e.v));
      ++checked;
      if (!(err <= double(e.e))) ++wrong, worst = std::max(worst, err);
    });
    if (me == 0) std::printf("%s: %lld parameters checked on rank 0\n", c.name().c_str(), checked);
    EXPECT_GT(checked, 0);
    EXPECT_EQ(wrong, 0) << "largest error outside the bound " << worst;
    const Counted got = counted(step.memory(), step.counters(), c.steps);
    const Counted pred = predicted(c.m, c.l, me);
    for (size_t k = 0; k < got.names.size(); ++k) EXPECT_EQ(got.values[k], pred.values[k]) << got.names[k];
    sp::comm::barrier();
  }
}

}  // namespace

namespace {

using namespace sp::hybrid;

// Pipeline parallelism moves data, it changes no sum: with one replica and
// no tensor split, every parameter of the fp32 step on W pipeline stages
// (each schedule, ZeRO 1, checkpointing) is bitwise the one of the same
// step on one rank, which each process runs alone for the comparison.
TEST(HybridMatrix, Fp32PipelineIsBitwiseTheOneRankStep) {
  const int W = sp::comm::size(), me = sp::comm::rank();
  if (W > 4) GTEST_SKIP() << "2..4 stages cover it; more ranks are slow on a small machine";
  ModelShape m;
  m.layers = 2 * W, m.hidden = 8, m.heads = 2, m.seq = 4, m.global_batch = 2 * W;
  Layout one;
  one.micro_batches = W, one.zero_stage = 1;
  std::map<std::pair<int, int64_t>, float> want;
  {
#ifdef SP_HAVE_MPI
    HybridStep<float> solo(m, one, 0, MPI_COMM_SELF);
#else
    HybridStep<float> solo(m, one, 0);
#endif
    solo.load();
    for (int s = 0; s < 2; ++s) solo.step();
    const BlockShape k = block_shape(m, one);
    int64_t idx = 0;
    solo.for_each_held([&](int layer, const ParamPos&, double v) { want[{layer, idx++ % k.elems()}] = float(v); });
  }
  for (auto kind :
       {sp::mp::ScheduleKind::gpipe, sp::mp::ScheduleKind::one_f_one_b, sp::mp::ScheduleKind::interleaved}) {
    Layout l = one;
    l.pp = W, l.schedule = kind, l.v = kind == sp::mp::ScheduleKind::interleaved ? 2 : 1;
    l.ckpt_every = 1;
    if (!layout_error(m, l, W).empty()) continue;  // interleaved needs layers % (2W) == 0: holds
    HybridStep<float> st(m, l, me);
    st.load();
    for (int s = 0; s < 2; ++s) st.step();
    const BlockShape k = block_shape(m, l);
    int64_t idx = 0, differ = 0, checked = 0;
    st.for_each_held([&](int layer, const ParamPos&, double v) {
      const float got = float(v), w = want.at({layer, idx++ % k.elems()});
      ++checked;
      differ += std::memcmp(&got, &w, sizeof got) != 0;
    });
    EXPECT_GT(checked, 0);
    EXPECT_EQ(differ, 0) << sp::mp::to_string(kind) << " rank " << me;
    sp::comm::barrier();
  }
}

}  // namespace
