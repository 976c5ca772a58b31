// The planner's search: the enumeration space, what it rejects and why, the
// ranking, and the layout it picks for GPT-3 175B on 1024 GPUs of 80 GB.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "kernels/hybrid/presets.hpp"
#include "scaleproof/compare.hpp"
#include "suites/hybrid/plan_search.hpp"

namespace {

using namespace sp::hybrid;
using namespace sp::hybrid::plan;

constexpr double kGiB = 1073741824.0;

MachineFigures a100_like() {
  MachineFigures m;
  m.gemm_flops = 140e12;
  m.tp = {5e-6, 1 / 200e9, 0};
  m.dp = m.pp = {10e-6, 1 / 25e9, 0};
  return m;
}

TEST(PlanSearch, ReasonFamilyReplacesNumbers) {
  EXPECT_EQ(reason_family("layout: heads 96 are not divisible by tp 64"), "layout: heads N are not divisible by tp N");
  EXPECT_EQ(reason_family("a1b22c"), "aNbNc");
  EXPECT_EQ(reason_family("none"), "none");
}

TEST(PlanSearch, EnumerationCoversTheDeclaredSpace) {
  ModelShape m;
  m.layers = 8, m.hidden = 64, m.heads = 4, m.seq = 16, m.global_batch = 12;
  const auto all = enumerate_layouts(m, 4, StorageType::fp32);
  // Factorizations of 4 into dp x tp x pp: 6; pipelines: gpipe, 1f1b,
  // interleaved v=2..8 (9) at pp > 1, 1f1b alone at pp = 1; micro-batch
  // counts dividing 12: 6; ZeRO stages: 4 at dp > 1, 1 at dp = 1;
  // checkpointing 0, 1, 2, 4, 8: 5. Grids (dp, tp, pp) with dp > 1: (2,1,2)
  // 9 x 4, (2,2,1) and (4,1,1) 1 x 4 each; with dp = 1: (1,1,4) and (1,2,2)
  // 9 each, (1,4,1) 1.
  EXPECT_EQ(all.size(), (9u * 4 + 2 * 4 + 2 * 9 + 1) * 6 * 5);
  for (const Layout& l : all)
    if (l.pp == 1) EXPECT_TRUE(l.schedule == sp::mp::ScheduleKind::one_f_one_b && l.v == 1);
  std::set<std::tuple<int, int, int>> grids;
  for (const Layout& l : all) {
    EXPECT_EQ(l.world(), 4);
    grids.insert({l.dp, l.tp, l.pp});
  }
  EXPECT_EQ(grids.size(), 6u);
}

TEST(PlanSearch, EveryRankedLayoutIsValidFitsAndIsInOrder) {
  ModelShape m;
  m.layers = 8, m.hidden = 256, m.heads = 8, m.seq = 128, m.global_batch = 16, m.vocab = 1000;
  Request r;
  r.model = m;
  r.ranks = 8;
  r.memory_bytes = 0.05 * kGiB;
  r.machine = a100_like();
  const Plan p = make_plan(r);
  ASSERT_FALSE(p.ranked.empty());
  long long rejected = 0;
  for (auto& [why, n] : p.rejected) rejected += n;
  EXPECT_EQ(rejected + static_cast<long long>(p.ranked.size()), p.enumerated);
  for (size_t i = 0; i < p.ranked.size(); ++i) {
    const Candidate& c = p.ranked[i];
    EXPECT_EQ(layout_error(m, c.layout, 8), "");
    EXPECT_LE(c.memory.total(), r.memory_bytes);
    if (i > 0) EXPECT_LE(p.ranked[i - 1].time.total, c.time.total);
  }
  // Some layouts are rejected for memory at this budget, and the smallest of them is above it.
  bool memory_reason = false;
  for (auto& [why, n] : p.rejected) memory_reason |= why.rfind("memory:", 0) == 0;
  EXPECT_TRUE(memory_reason);
  EXPECT_GT(p.smallest_rejected_memory, r.memory_bytes);
}

TEST(PlanSearch, Gpt3On1024GpusOf80GiBPicksALayoutThatFits) {
  const Preset& g = *find_preset("gpt3-175b");
  Request r;
  r.model = g.model;
  r.ranks = g.gpus;
  r.memory_bytes = 80 * kGiB;
  r.machine = a100_like();
  const Plan p = make_plan(r);
  ASSERT_FALSE(p.ranked.empty());
  const Candidate& best = p.ranked.front();
  EXPECT_EQ(layout_error(g.model, best.layout, 1024), "");
  EXPECT_LE(best.memory.total(), 80 * kGiB) << describe(best.layout);
  // Its memory and bubble are the paper's formulas for its own layout.
  const auto mem = megatron::memory_per_gpu(g.model, best.layout);
  EXPECT_EQ(best.memory.total(), mem.total());
  const auto& l = best.layout;
  const double r_ideal = megatron::bubble_over_ideal(l.schedule, l.pp, l.micro_batches, l.v);
  const double f = r_ideal / (1 + r_ideal);
  EXPECT_LE(std::fabs(best.time.bubble_fraction - f), sp::gamma_n(4, sp::unit_roundoff<double>()) * f);
  // The paper's own layout (t = 8, p = 8, 16-way data parallel, full
  // recomputation) fits and is among the ranked ones.
  bool found = false;
  for (const Candidate& c : p.ranked)
    found |= c.layout.tp == 8 && c.layout.pp == 8 && c.layout.dp == 16 && c.layout.ckpt_every == 1 &&
             c.layout.zero_stage == 0 && c.layout.schedule == sp::mp::ScheduleKind::one_f_one_b &&
             c.layout.micro_batches == 96;
  EXPECT_TRUE(found);
}

TEST(PlanSearch, NothingFitsInATinyBudget) {
  const Preset& g = *find_preset("gpt3-175b");
  Request r;
  r.model = g.model;
  r.ranks = 8;
  r.memory_bytes = 1 * kGiB;
  r.machine = a100_like();
  const Plan p = make_plan(r);
  EXPECT_TRUE(p.ranked.empty());
  EXPECT_GT(p.smallest_rejected_memory, 1 * kGiB);
}

TEST(PlanSearch, DescribeNamesEveryField) {
  Layout l;
  l.dp = 2, l.tp = 4, l.pp = 8, l.v = 3, l.micro_batches = 16, l.schedule = sp::mp::ScheduleKind::interleaved;
  l.zero_stage = 1, l.ckpt_every = 2;
  EXPECT_EQ(describe(l), "dp=2 tp=4 pp=8 interleaved v=3 m=16 zero=1 ckpt=2");
}

}  // namespace
