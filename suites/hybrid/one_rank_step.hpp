#pragma once
// The single-rank step a 16-bit (or fp32) run is compared with: the same
// HybridStep<S> on one rank alone (MPI_COMM_SELF), the whole model in one
// chunk, one replica of dp x mb micro-batches of the same size (so every
// micro-batch holds the same rows as on the replica that runs it), the same
// ZeRO stage and loss scaling, no checkpointing. Pipeline splits, schedules
// and checkpointing only move and repeat operations, so a layout with
// dp = tp = 1 gives these parameters bit for bit; tensor and data
// parallelism reorder sums, and their reference is the same one-rank step
// adding those sums in the layout's order (HybridStep::reproduce_order_of;
// docs/hybrid.md, "16-bit storage").
#include <map>
#include <tuple>

#include "kernels/hybrid/step.hpp"
#include "scaleproof/comm.hpp"

namespace sp::hybrid {

// (global layer, tensor, row, column) of the full model -> value.
using ParamValues = std::map<std::tuple<int, int, int64_t, int64_t>, double>;

inline std::tuple<int, int, int64_t, int64_t> param_key(int layer, const ParamPos& p) {
  return {layer, int(p.t), p.i, p.j};
}

inline Layout one_rank_layout(const Layout& l) {
  Layout o;
  o.micro_batches = l.dp * l.micro_batches;
  o.schedule = l.schedule == mp::ScheduleKind::interleaved ? mp::ScheduleKind::one_f_one_b : l.schedule;
  o.zero_stage = l.zero_stage;
  o.storage = l.storage;
  return o;
}

// The master weights (16-bit storage) or parameters (fp32, fp64) of the
// one-rank step after `steps` steps; skipped: its skipped steps.
// in_order: the one-rank step reproduces l's reduction orders (tensor-parallel
// split, data-parallel replicas); otherwise it is the plain one-rank step.
template <class S>
ParamValues one_rank_masters(const ModelShape& m, const Layout& l, int steps, const precision::ScalerConfig& sc = {},
                             int* skipped = nullptr, bool in_order = false) {
#ifdef SP_HAVE_MPI
  HybridStep<S> solo(m, one_rank_layout(l), 0, sp::comm::self());
#else
  HybridStep<S> solo(m, one_rank_layout(l), 0);
#endif
  if (in_order) solo.reproduce_order_of(l);
  solo.set_scaler(sc);
  solo.load();
  for (int s = 0; s < steps; ++s) solo.step();
  if (skipped) *skipped = solo.skipped_steps();
  ParamValues out;
  solo.for_each_master([&](int layer, const ParamPos& p, double v) { out[param_key(layer, p)] = v; });
  return out;
}

// The reference of l: the plain one-rank step where l keeps every sum's
// order (dp = tp = 1), else the one-rank step in l's reduction order.
template <class S>
ParamValues reference_masters(const ModelShape& m, const Layout& l, int steps, const precision::ScalerConfig& sc = {},
                              int* skipped = nullptr) {
  return one_rank_masters<S>(m, l, steps, sc, skipped, l.dp > 1 || l.tp > 1);
}

}  // namespace sp::hybrid
