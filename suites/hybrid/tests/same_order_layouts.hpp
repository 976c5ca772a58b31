#pragma once
// The one-rank layouts that change when and where the step's operations run
// but never the operations or their order (schedule, ZeRO stage 0 / 1,
// activation checkpointing): a step on any of them must leave the
// parameters bitwise equal to a step on `base` (gpipe, ZeRO 0, no
// checkpointing, micro-batches as given).
#include <vector>

#include "kernels/hybrid/layout.hpp"

namespace sp::hybrid {

inline std::vector<Layout> same_order_layouts(const Layout& base) {
  std::vector<Layout> others(4, base);
  others[0].schedule = sp::mp::ScheduleKind::one_f_one_b, others[0].zero_stage = 1;
  others[1].ckpt_every = 2;
  others[2].schedule = sp::mp::ScheduleKind::interleaved, others[2].v = 2, others[2].ckpt_every = 1;
  others[3].zero_stage = 1, others[3].ckpt_every = 1;
  return others;
}

}  // namespace sp::hybrid
