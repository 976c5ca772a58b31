// The memory view's formulas against the published check values.
#include <gtest/gtest.h>

#include <cmath>

#include "suites/modelparallel/memory_view.hpp"

TEST(MemoryView, ZeroFigure1Values) {
  // Rajbhandari et al. Figure 1: Psi = 7.5e9, N_d = 64 -> 120, 31.4, 16.6, 1.9 GB of model states.
  sp::mp::ModelShape s;
  s.layers = 1;
  s.hidden = std::sqrt(7.5e9 / 12);  // 12 h^2 = 7.5e9
  sp::mp::Parallelism par{64, 1, 1, 1, 1};
  const auto rows = sp::mp::memory_view(s, par);
  auto states = [&](int i) { return (rows[i].params + rows[i].grads + rows[i].optim) / 1e9; };
  EXPECT_NEAR(states(1), 120, 0.05);
  EXPECT_NEAR(states(2), 31.4, 0.05);
  EXPECT_NEAR(states(3), 16.6, 0.05);
  EXPECT_NEAR(states(4), 1.875, 0.001);
}

TEST(MemoryView, TensorParallelActivationsReduceToUnsplitAtT1) {
  // Korthikanti Table 2: sbh(10 + 24/t + 5as/(ht)) equals sbh(34 + 5as/h) at t = 1.
  sp::mp::ModelShape s;
  const double sbh = s.seq * s.micro_batch * s.hidden;
  EXPECT_DOUBLE_EQ(s.act_per_layer(1), sbh * (34 + 5 * s.heads * s.seq / s.hidden));
  EXPECT_LT(s.act_per_layer(8), s.act_per_layer(1) / 2);
}

TEST(MemoryView, PipelineRankZeroHoldsScheduleDependentActivations) {
  sp::mp::ModelShape s;  // 96 layers
  const double per_layer = s.act_per_layer(1);
  auto acts = [&](sp::mp::ScheduleKind k, int v) {
    sp::mp::Parallelism par{1, 1, 8, v, 16, k};
    return sp::mp::memory_view(s, par)[6].acts;
  };
  EXPECT_DOUBLE_EQ(acts(sp::mp::ScheduleKind::gpipe, 1), 16 * 12 * per_layer);       // m sets of L/p layers
  EXPECT_DOUBLE_EQ(acts(sp::mp::ScheduleKind::one_f_one_b, 1), 8 * 12 * per_layer);  // p sets
  // Interleaved, v = 2: 1 + (p-1)/(p v) times 1F1B's (docs/modelparallel.md).
  EXPECT_DOUBLE_EQ(acts(sp::mp::ScheduleKind::interleaved, 2),
                   acts(sp::mp::ScheduleKind::one_f_one_b, 1) * (1 + 7.0 / 16));
}
