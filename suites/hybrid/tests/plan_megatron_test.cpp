// The planner's memory, bubble and FLOPs against Narayanan et al. (SC'21):
// the parameter counts of Table 1 and GPT-3, Korthikanti et al.'s activation
// table, the bubble formulas, and the layouts the paper trained on 80 GB GPUs.
// Independent of the cost model: megatron.* and the schedule only.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/hybrid/megatron.hpp"
#include "kernels/hybrid/presets.hpp"
#include "scaleproof/compare.hpp"

namespace {

using namespace sp::hybrid;
namespace mg = sp::hybrid::megatron;

constexpr double kGiB = 1073741824.0;
const double u = sp::unit_roundoff<double>();

// The paper's layout for a preset: dp = GPUs / (t p), micro-batch size 1,
// 1F1B, no ZeRO, 16-bit storage, full recomputation (every block input kept).
Layout published(const Preset& p) {
  Layout l;
  l.tp = p.tp, l.pp = p.pp, l.dp = p.gpus / (p.tp * p.pp);
  l.micro_batches = p.model.global_batch / l.dp;
  l.schedule = sp::mp::ScheduleKind::one_f_one_b;
  l.storage = StorageType::bf16;
  l.ckpt_every = 1;
  return l;
}

TEST(PlanMegatron, ParameterCountsRoundToThePublishedOnes) {
  int rows = 0;
  for (const Preset& p : presets()) {
    const double got = mg::param_count(p.model);
    // The source prints the count to published_digits: it lies within half of one.
    EXPECT_LE(std::fabs(got - p.published_params), p.published_digits / 2) << p.name << ": " << got;
    rows += p.source.find("Table 1") != std::string::npos;
  }
  EXPECT_EQ(rows, 10);
}

TEST(PlanMegatron, ParameterCountIsTheClosedFormOfThePaper) {
  // P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)), Narayanan et al. sec. 5.1.
  for (const Preset& p : presets()) {
    const double l = p.model.layers, h = p.model.hidden, V = p.model.vocab, s = p.model.seq;
    const double want = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
    EXPECT_LE(std::fabs(mg::param_count(p.model) - want), sp::gamma_n(12, u) * want) << p.name;
  }
}

TEST(PlanMegatron, PublishedLayoutsAreValid) {
  for (const Preset& p : presets()) {
    if (p.gpus < 2) continue;
    EXPECT_EQ(layout_error(p.model, published(p), p.gpus), "") << p.name;
  }
}

TEST(PlanMegatron, ActivationTableOfKorthikanti) {
  // GPT-3 175B, t = 8, b = 1: 5as/h = 80, 5as/(ht) = 10; every term an exact binary number.
  const ModelShape m = find_preset("gpt3-175b")->model;
  const double sbh = 2048.0 * 12288;
  EXPECT_EQ(mg::act_per_block(m, 1, 1, mg::ActSplit::none), sbh * 114);
  EXPECT_EQ(mg::act_per_block(m, 1, 8, mg::ActSplit::tp), sbh * 23);
  EXPECT_EQ(mg::act_per_block(m, 1, 8, mg::ActSplit::tp_sp), sbh / 8 * 114);
  EXPECT_EQ(mg::act_full_recompute(m, 1, 8, mg::ActSplit::tp), 2 * sbh);
  EXPECT_EQ(mg::act_full_recompute(m, 1, 8, mg::ActSplit::tp_sp), 2 * sbh / 8);
  // t = 1 is the unsplit row whatever the split.
  EXPECT_EQ(mg::act_per_block(m, 1, 1, mg::ActSplit::tp), sbh * 114);
}

TEST(PlanMegatron, MemoryPerGpuOfThePublishedLayoutsIsThePaperFormula) {
  for (const Preset& p : presets()) {
    if (p.gpus < 2) continue;
    const Layout l = published(p);
    const double L = p.model.layers, h = p.model.hidden, s = p.model.seq, a = p.model.heads;
    const double V = p.model.vocab, t = p.tp, pp = p.pp;
    // Stage 0: (L/p blocks of 12h^2 + 13h, plus (V + s) h) / t parameters, 18 bytes each.
    const double params = ((12 * h * h + 13 * h) * L / pp + (V + s) * h) / t;
    // 1F1B keeps p micro-batches of L/p blocks in flight (m >= p): L block
    // inputs of 2sbh, plus one block's full activations while it is recomputed.
    const double acts = L * 2 * s * h + s * h * (t > 1 ? 10 + 24 / t + 5 * a * s / (h * t) : 34 + 5 * a * s / h);
    const double want = 18 * params + acts;
    const mg::Memory got = mg::memory_per_gpu(p.model, l);
    EXPECT_LE(std::fabs(got.total() - want), sp::gamma_n(16, u) * want) << p.name;
    EXPECT_DOUBLE_EQ(got.params, 2 * params);
    // The paper trained each of these layouts on 80 GB A100s.
    EXPECT_LE(got.total(), 80 * kGiB) << p.name << ": " << got.total() / kGiB << " GiB";
  }
}

TEST(PlanMegatron, ZeroShardsModelStatesOverDataParallelRanks) {
  // Rajbhandari et al. Figure 1 accounting (2 + 2 + 12 bytes), no activations:
  // a model with no tensor or pipeline split and ZeRO stage k.
  const Preset& p = *find_preset("megatron-7.5b");
  Layout l;
  l.dp = 64, l.micro_batches = 8, l.storage = StorageType::fp16;
  mg::MemoryOptions o;
  o.fp32_grads = false;
  const double psi = mg::param_count(p.model);
  const double want[4] = {16 * psi, 4 * psi + 12 * psi / 64, 2 * psi + 14 * psi / 64, 16 * psi / 64};
  for (int z = 0; z <= 3; ++z) {
    l.zero_stage = z;
    const mg::Memory got = mg::memory_per_gpu(p.model, l, o);
    const double states = got.params + got.grads + got.optimizer;
    EXPECT_LE(std::fabs(states - want[z]), sp::gamma_n(4, u) * want[z]) << "stage " << z;
  }
}

TEST(PlanMegatron, BubbleIsThePaperFractionOfIdealCompute) {
  using K = sp::mp::ScheduleKind;
  for (const Preset& p : presets()) {
    const Layout l = published(p);
    const int m = l.micro_batches;
    EXPECT_EQ(mg::bubble_over_ideal(K::one_f_one_b, p.pp, m, 1), (p.pp - 1) / static_cast<double>(m)) << p.name;
    // The schedule's share of the step, f = r / (1 + r) with r the paper's ratio.
    for (int v : {1, 2, 4}) {
      const K k = v == 1 ? K::one_f_one_b : K::interleaved;
      const double r = mg::bubble_over_ideal(k, p.pp, m, v);
      EXPECT_EQ(r, (p.pp - 1) / (static_cast<double>(v) * m));
      const double f = sp::mp::predicted_bubble(k, p.pp, m, v);
      EXPECT_LE(std::fabs(f - r / (1 + r)), sp::gamma_n(4, u) * (r / (1 + r))) << p.name << " v=" << v;
    }
  }
}

TEST(PlanMegatron, FlopsPerStepAreEquationThree) {
  for (const Preset& p : presets()) {
    const double B = p.model.global_batch, s = p.model.seq, l = p.model.layers, h = p.model.hidden;
    const double V = p.model.vocab;
    // With recomputation: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)); without: 72 (... + V/(12 l h)).
    const double with = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    const double without = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    EXPECT_LE(std::fabs(mg::flops_per_step(p.model, 1) - with), sp::gamma_n(16, u) * with) << p.name;
    EXPECT_LE(std::fabs(mg::flops_per_step(p.model, 0) - without), sp::gamma_n(16, u) * without) << p.name;
  }
}

}  // namespace
