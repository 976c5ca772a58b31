// The time model of time_model.hpp.
#include "kernels/hybrid/time_model.hpp"

namespace sp::hybrid {

double group_seconds(const GroupWork& w, const Link& l) {
  return w.latency_steps * l.alpha + w.bytes_sent * l.beta + w.bytes_reduced * l.gamma;
}

double total_flops(const StepWork& w) {
  double f = 0;
  for (const GemmShape& g : w.gemms) f += g.flops();
  return f;
}

StepTime predict_step_time(const StepWork& w, const MachineFigures& mf) {
  StepTime t;
  for (const GemmShape& g : w.gemms) t.gemm += g.flops() / mf.rate(g);
  t.elementwise = mf.elementwise_bw > 0 ? w.elementwise_bytes / mf.elementwise_bw : 0.0;
  t.compute = t.gemm + t.elementwise;
  t.tp = group_seconds(w.tp, mf.tp);
  t.pp = w.pp_messages * mf.pp.alpha + w.pp_bytes * mf.pp.beta;
  t.dp = group_seconds(w.dp, mf.dp);
  t.bubble_fraction = mp::predicted_bubble(w.schedule, w.p, w.m, w.v);
  const double busy = t.compute + t.tp + t.pp;
  const double pipelined = busy / (1 - t.bubble_fraction);
  t.bubble = pipelined - busy;
  t.total = pipelined + t.dp;
  return t;
}

}  // namespace sp::hybrid
