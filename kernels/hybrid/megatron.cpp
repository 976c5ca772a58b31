// The published formulas of megatron.hpp.
#include "kernels/hybrid/megatron.hpp"

namespace sp::hybrid::megatron {

double block_params(const ModelShape& m) {
  const double h = m.hidden, f = m.ffn_width();
  // QKV 3h^2 + 3h, output projection h^2 + h, MLP 2hf + f + h, two layer norms 4h.
  return 4 * h * h + 2 * h * f + 9 * h + f;
}

double embedding_params(const ModelShape& m) {
  return m.vocab > 0 ? (static_cast<double>(m.vocab) + m.seq) * m.hidden : 0.0;
}

double param_count(const ModelShape& m) { return m.layers * block_params(m) + embedding_params(m); }

StateBytes state_bytes(StorageType s, bool fp32_grads) {
  if (s == StorageType::fp32) return {4, 4, 8};
  if (s == StorageType::fp64) return {8, 8, 16};
  return {2, fp32_grads ? 4.0 : 2.0, 12};
}

double act_per_block(const ModelShape& m, double b, int t, ActSplit split) {
  const double s = m.seq, h = m.hidden, a = m.heads, sbh = s * b * h;
  if (split == ActSplit::tp_sp) return sbh / t * (34 + 5 * a * s / h);
  if (split == ActSplit::tp && t > 1) return sbh * (10 + 24.0 / t + 5 * a * s / (h * t));
  return sbh * (34 + 5 * a * s / h);
}

double act_full_recompute(const ModelShape& m, double b, int t, ActSplit split) {
  const double sbh = static_cast<double>(m.seq) * b * m.hidden;
  return split == ActSplit::tp_sp ? 2 * sbh / t : 2 * sbh;
}

Memory memory_per_gpu(const ModelShape& m, const Layout& l, const MemoryOptions& o) {
  Memory r;
  const double on_rank = (block_params(m) * m.layers / l.pp + embedding_params(m)) / l.tp;
  const StateBytes sb = state_bytes(l.storage, o.fp32_grads);
  r.params = sb.param * on_rank / (l.zero_stage >= 3 ? l.dp : 1);
  r.grads = sb.grad * on_rank / (l.zero_stage >= 2 ? l.dp : 1);
  r.optimizer = sb.optim * on_rank / (l.zero_stage >= 1 ? l.dp : 1);

  const double b = l.micro_batch_size(m);
  const double widen = l.storage == StorageType::fp32 ? 2 : 1;
  const double full = widen * act_per_block(m, b, l.tp, o.split);
  const int sets = mp::predicted_peak_stash(l.schedule, l.pp, l.micro_batches, l.v, 0);
  const int per_chunk = m.layers / (l.pp * l.v);
  if (l.ckpt_every == 0) {
    r.activations = static_cast<double>(sets) * per_chunk * full;
  } else {
    const int segments = (per_chunk + l.ckpt_every - 1) / l.ckpt_every;
    r.activations =
        static_cast<double>(sets) * segments * widen * act_full_recompute(m, b, l.tp, o.split) + l.ckpt_every * full;
  }
  return r;
}

double flops_per_step(const ModelShape& m, double recompute) {
  const double B = m.global_batch, s = m.seq, h = m.hidden, f = m.ffn_width(), L = m.layers;
  const double block_fwd = B * s * (8 * h * h + 4 * h * f) + 4 * B * s * s * h;
  const double logits_fwd = 2 * B * s * h * m.vocab;
  return (3 + recompute) * L * block_fwd + 3 * logits_fwd;
}

double bubble_over_ideal(mp::ScheduleKind k, int p, int m, int v) {
  const double vv = k == mp::ScheduleKind::interleaved ? v : 1;
  return (p - 1) / (vv * m);
}

}  // namespace sp::hybrid::megatron
