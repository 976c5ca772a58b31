// A provisional analytical stand-in for the composed step's cost model
// (cost_model.hpp), so that the planner builds and runs before the step's own
// cost model exists; the step's cost_model.cpp replaces this file.
//   FLOPs: the stage's blocks (megatron.hpp's per-block count) over the
//   rank's share of the batch, split t ways; the last stage adds the logits.
//   Tensor parallel: two all-reduces of the b s h micro-batch activations
//   per block in the forward pass, two in the backward, two more when the
//   forward is recomputed. Data parallel: the rank's gradients, once per
//   chunk. Pipeline: mp::predicted_messages_sent messages of b s h values.
#include <algorithm>

#include "kernels/hybrid/cost_model.hpp"
#include "kernels/hybrid/megatron.hpp"

namespace sp::hybrid {

namespace {

double elt_bytes(StorageType s) { return s == StorageType::fp32 ? 4 : 2; }

double params_on_rank(const ModelShape& m, const Layout& l, int stage) {
  double p = megatron::block_params(m) * m.layers / l.pp;
  if (stage == 0) p += megatron::embedding_params(m);
  return p / l.tp;
}

}  // namespace

MemoryByCategory predict_memory(const ModelShape& m, const Layout& l, int /*rank*/) {
  const auto mm = megatron::memory_per_gpu(m, l);
  MemoryByCategory r;
  r.params = mm.params;
  r.grads = mm.grads;
  r.optimizer = mm.optimizer;
  r.activations = mm.activations;
  return r;
}

TrafficPerStep predict_traffic(const ModelShape& m, const Layout& l, int rank) {
  TrafficPerStep t;
  const GridCoord c = grid_coord(l, rank);
  const double e = elt_bytes(l.storage), b = l.micro_batch_size(m);
  const double act = b * m.seq * m.hidden * e;
  const long long blocks = m.layers / l.pp;
  const int per_block = 4 + (l.ckpt_every > 0 ? 2 : 0);
  if (l.tp > 1) {
    t.tp_collectives = blocks * l.micro_batches * per_block;
    t.tp_bytes = static_cast<double>(t.tp_collectives) * 2.0 * (l.tp - 1) / l.tp * act;
  }
  if (l.dp > 1) {
    const double grads = params_on_rank(m, l, c.pp) * e;
    const double rounds = l.zero_stage == 3 ? 3 : 2;  // RS + AG (stage 0's all-reduce too); stage 3 gathers twice
    t.dp_bytes = rounds * (l.dp - 1.0) / l.dp * grads;
    t.dp_collectives = static_cast<long long>(l.v) * (l.zero_stage == 0 ? 1 : static_cast<int>(rounds));
  }
  t.pp_messages = mp::predicted_messages_sent(l.pp, l.micro_batches, l.v, c.pp);
  t.pp_bytes = static_cast<double>(t.pp_messages) * act / l.tp;
  return t;
}

double predict_flops(const ModelShape& m, const Layout& l, int rank) {
  const GridCoord c = grid_coord(l, rank);
  const double B = static_cast<double>(m.global_batch) / l.dp, s = m.seq, h = m.hidden, f = m.ffn_width();
  const double block_fwd = B * s * (8 * h * h + 4 * h * f) + 4 * B * s * s * h;
  const double passes = 3 + (l.ckpt_every > 0 ? 1 : 0);
  double fl = passes * block_fwd * (m.layers / l.pp);
  if (c.pp == l.pp - 1) fl += 3 * 2 * B * s * h * m.vocab;
  return fl / l.tp;
}

}  // namespace sp::hybrid
