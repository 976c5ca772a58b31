#include "suites/hybrid/hybrid_counts.hpp"

#include <cmath>
#include <cstdio>

#include "kernels/hybrid/cost_model.hpp"
#include "suites/hybrid/hybrid_params.hpp"

namespace sp::hybrid {

namespace {
const std::vector<std::string> kNames = {
    "peak_params_bytes", "peak_grads_bytes",        "peak_optimizer_bytes",    "peak_activations_bytes",
    "peak_comm_bytes",   "peak_memory_total_bytes", "dp_bytes_per_step",       "tp_bytes_per_step",
    "pp_bytes_per_step", "dp_collectives_per_step", "tp_collectives_per_step", "pp_messages_per_step"};
const std::vector<std::string> kQuantities = {
    "peak memory params",       "peak memory grads",       "peak memory optimizer",   "peak memory activations",
    "peak memory comm buffers", "peak memory total",       "dp bytes per step",       "tp bytes per step",
    "pp bytes per step",        "dp collectives per step", "tp collectives per step", "pp messages per step"};
}  // namespace

Counted counted(const MemoryTracker& mem, const StepCounters& c, double steps) {
  const double pk[] = {mem.peak(Mem::params), mem.peak(Mem::grads), mem.peak(Mem::optim), mem.peak(Mem::activations),
                       mem.peak(Mem::comm)};
  return {kNames,
          {pk[0], pk[1], pk[2], pk[3], pk[4], pk[0] + pk[1] + pk[2] + pk[3] + pk[4], double(c.dp.bytes_sent) / steps,
           double(c.tp.bytes_sent) / steps, double(c.pp.bytes_sent) / steps, double(c.dp_collectives) / steps,
           double(c.tp_collectives) / steps, double(c.pp.messages_sent) / steps}};
}

Counted predicted(const ModelShape& m, const Layout& l, int rank) {
  const MemoryByCategory mem = predict_memory(m, l, rank);
  const TrafficPerStep t = predict_traffic(m, l, rank);
  return {kNames,
          {mem.params, mem.grads, mem.optimizer, mem.activations, mem.comm_buffers, mem.total(), t.dp_bytes, t.tp_bytes,
           t.pp_bytes, double(t.dp_collectives), double(t.tp_collectives), double(t.pp_messages)}};
}

sp::Counts hybrid_counts(const Params& p, int nranks) {
  const ModelShape m = model_of(p);
  const Layout l = layout_of(p, nranks);
  sp::Counts c;
  c.dtype = p.s("storage");
  if (!layout_error(m, l, nranks).empty()) return c;
  const double steps = double(p.i("steps"));
  c.flops = steps * predict_flops(m, l, 0);
  const MemoryByCategory mem = predict_memory(m, l, 0);
  c.footprint = mem.total();
  // Per step: parameters, gradients and Adam's state read and written once
  // by the optimizer, the activations written in forward and read in backward.
  c.bytes_read = steps * (mem.params + mem.grads + mem.optimizer + mem.activations);
  c.bytes_written = c.bytes_read;
  return c;
}

std::vector<nn::GemmShape> gemm_shapes(const ModelShape& m, const Layout& l, int steps) {
  const BlockAct a{block_shape(m, l), Rows{l.micro_batch_size(m), m.seq}};
  const double per = double(steps) * l.micro_batches * l.v * blocks_per_chunk(m, l);
  std::vector<nn::GemmShape> out;
  auto add = [&](const std::vector<BlockGemm>& gs, double times) {
    for (const BlockGemm& g : gs) out.push_back({g.m, g.n, g.k, per * times * g.count});
  };
  add(block_gemms_forward(a), l.ckpt_every > 0 ? 2 : 1);
  add(block_gemms_backward(a), 1);
  return out;
}

void append_hybrid_verdicts(const std::string& name, const Params& p, const std::string& variant, const Measurement& m,
                            std::vector<Verdict>& out) {
  if (!m.counters.count("peak_params_bytes")) return;  // not a hybrid_step measurement
  const ModelShape model = model_of(p);
  const Layout l = layout_of(p, m.ranks);
  const Counted pr = predicted(model, l, 0);
  auto counter = [&](const std::string& k) {
    auto it = m.counters.find(k);
    return it == m.counters.end() ? 0.0 : it->second;
  };
  for (size_t k = 0; k < pr.names.size(); ++k) {
    out.push_back(
        exact_verdict(name, variant, p, kQuantities[k], k < 9 ? "bytes" : "count", pr.values[k], counter(pr.names[k]),
                      "rank 0: counted from the step's objects and transports vs kernels/hybrid/cost_model.cpp"));
  }
  out.push_back(exact_verdict(name, variant, p, "ranks whose counts differ from the prediction", "ranks", 0,
                              counter("ranks_with_count_mismatch"),
                              "every rank compares each counted quantity with its own prediction"));
  // The pipeline bubble: predicted (schedule.hpp) and 1 - busy / step time (reported).
  const double steps = double(p.i("steps"));
  Verdict b{name, variant, p.label(), "pipeline bubble fraction", "fraction"};
  b.predicted = mp::predicted_bubble(l.schedule, l.pp, l.micro_batches, l.v);
  const double step_s = m.seconds / steps, busy = counter("busy_s_per_step");
  b.measured = step_s > 0 ? std::max(0.0, 1 - busy / step_s) : 0;
  b.ratio = b.predicted > 0 ? b.measured / b.predicted : 1;
  b.band_lo = 0, b.band_hi = INFINITY;
  b.status = sp::Status::info;
  b.note = "measured: 1 - (time in F/B operations, receive waits excluded, max over ranks) / step time";
  out.push_back(b);
  Verdict f{name, variant, p.label(), "step FLOP/s", "FLOP/s"};
  f.predicted = 0;
  f.measured = m.seconds > 0 ? steps * predict_flops(model, l, 0) / m.seconds : 0;
  f.ratio = 1, f.band_lo = 0, f.band_hi = INFINITY, f.status = sp::Status::info;
  f.note = "per rank: the step's GEMM FLOPs (cost_model predict_flops) over the measured time";
  out.push_back(f);
}

}  // namespace sp::hybrid
