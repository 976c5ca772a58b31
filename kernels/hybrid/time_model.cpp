// The time model of time_model.hpp.
#include "kernels/hybrid/time_model.hpp"

namespace sp::hybrid {

const char* to_string(GemmOps o) { return o == GemmOps::nt ? "nt" : o == GemmOps::tn ? "tn" : "nn"; }

bool parse_gemm_ops(const std::string& s, GemmOps& out) {
  for (GemmOps o : {GemmOps::nn, GemmOps::nt, GemmOps::tn})
    if (s == to_string(o)) return out = o, true;
  return false;
}

double group_seconds(const GroupWork& w, const Link& l) {
  return w.latency_steps * l.alpha + w.bytes_sent * l.beta + w.bytes_reduced * l.gamma;
}

double total_flops(const StepWork& w) {
  double f = 0;
  for (const GemmShape& g : w.gemms) f += g.flops();
  return f;
}

double AttentionWork::products(const GemmShape& g) const {
  const double bh = double(b) * heads;
  double n = 0;
  if (g.m == s && g.n == s && g.k == d && g.ops == GemmOps::nt)
    n += bh * (forward_calls + backward_calls);  // Q K^T, dO V^T
  if (g.m == s && g.n == d && g.k == s && g.ops == GemmOps::nn)
    n += bh * (forward_calls + backward_calls);                                                // P V, dS K
  if (g.m == s && g.n == d && g.k == s && g.ops == GemmOps::tn) n += bh * 2 * backward_calls;  // dS^T Q, P^T dO
  return n;
}

StepTime predict_step_time(const StepWork& w, const MachineFigures& mf) {
  StepTime t;
  const AttentionWork& a = w.attention;
  const auto measured = mf.attention_seconds.find(a.key());
  const bool attention = measured != mf.attention_seconds.end();
  for (const GemmShape& g : w.gemms) {
    GemmShape rest = g;
    if (attention) rest.count -= a.products(g);
    t.gemm += rest.flops() / mf.rate(g);
  }
  const double ew = w.elementwise_bytes - (attention ? a.softmax_bytes : 0.0);
  t.elementwise = mf.elementwise_bw > 0 ? ew / mf.elementwise_bw : 0.0;
  if (mf.streaming_bw() > 0) t.elementwise += w.shard_bytes / mf.streaming_bw();
  if (attention) t.attention = a.forward_calls * measured->second.first + a.backward_calls * measured->second.second;
  t.compute = t.gemm + t.elementwise + t.attention;
  t.tp = group_seconds(w.tp, mf.tp);
  t.pp = w.pp_messages * mf.pp.alpha + w.pp_bytes * mf.pp.beta;
  t.dp = group_seconds(w.dp, mf.dp);
  t.bubble_fraction = mp::predicted_bubble(w.schedule, w.p, w.m, w.v);
  const double busy = t.compute + t.tp + t.pp;
  const double pipelined = busy / (1 - t.bubble_fraction);
  t.bubble = pipelined - busy;
  t.optimizer = mf.streaming_bw() > 0 ? w.optimizer_bytes / mf.streaming_bw() : 0.0;
  t.total = pipelined + t.dp + t.optimizer;
  return t;
}

}  // namespace sp::hybrid
