#include "kernels/hybrid/cost_model.hpp"

#include <algorithm>
#include <map>

#include "kernels/comm/partition.hpp"
#include "kernels/hybrid/block.hpp"

namespace sp::hybrid {

namespace {

// Bytes of one stored element (parameters, activations, checkpoints,
// pipeline messages, tensor-parallel all-reduces, ZeRO's parameter
// gathers): 8, 4, or 2 for fp16 and bf16. Bytes of one accumulated element
// (gradients, Adam's moments and, with 16-bit storage, the fp32 master
// weights and the data-parallel gradient reductions): 8 for fp64, else 4.
double storage_bytes(const Layout& l) { return element_bytes(l.storage); }
double acc_bytes(StorageType s) { return s == StorageType::fp64 ? 8 : 4; }
double acc_bytes(const Layout& l) { return acc_bytes(l.storage); }
bool mixed(StorageType s) { return s == StorageType::fp16 || s == StorageType::bf16; }
bool mixed(const Layout& l) { return mixed(l.storage); }

// The quantities of a rank that every prediction starts from.
struct RankView {
  GridCoord c;
  BlockShape k;
  int bpc, chunks, mbs;
  double pc, shard, nh;       // chunk parameters, this rank's ZeRO shard of them, one message
  double act_block, scratch;  // BlockAct and a B op's scratch (BlockScratch + two n h), elements
};

RankView view(const ModelShape& m, const Layout& l, int rank) {
  RankView r;
  r.c = grid_coord(l, rank);
  r.k = block_shape(m, l);
  r.bpc = blocks_per_chunk(m, l);
  r.chunks = l.pp * l.v;
  r.mbs = l.micro_batch_size(m);
  const Rows rows{r.mbs, m.seq};
  r.pc = double(r.bpc) * double(r.k.elems());
  r.shard = double(comm::Partition{size_t(r.pc), l.dp}.size(r.c.dp));
  r.nh = double(rows.n()) * m.hidden;
  const int st = mixed(l) ? 2 : 1;  // storage elements per fp32 layer-norm statistic (block.hpp)
  r.act_block = double(BlockAct{r.k, rows, st}.elems());
  r.scratch = double(BlockScratch{r.k, rows, st}.elems()) + 2 * r.nh;
  return r;
}

// Bytes rank r sends in a ring reduce-scatter / all-gather of n floats over p
// ranks (kernels/comm/ring.hpp: every chunk but its own, every chunk
// but the one after its own), and the messages of each: p - 1.
double rs_bytes(double n, int p, int r, double kF) {
  return p == 1 ? 0 : (n - double(comm::Partition{size_t(n), p}.size(r))) * kF;
}
double ag_bytes(double n, int p, int r, double kF) {
  return p == 1 ? 0 : (n - double(comm::Partition{size_t(n), p}.size((r + 1) % p))) * kF;
}
// The largest chunk, the scratch a reduce-scatter holds (dp_comm.hpp).
double rs_tmp(double n, int p, double kF) { return p == 1 ? 0 : double(comm::Partition{size_t(n), p}.size(0)) * kF; }

}  // namespace

MemoryByCategory predict_memory(const ModelShape& m, const Layout& l, int rank) {
  const RankView r = view(m, l, rank);
  const double kF = storage_bytes(l), kA = acc_bytes(l);
  MemoryByCategory out;
  const double v = l.v;
  out.params = (l.zero_stage == 3 ? v * r.shard + r.pc : v * r.pc) * kF;
  out.grads = (l.zero_stage >= 2 ? v * r.shard + r.pc : v * r.pc) * kA;
  // Adam's m and v, and with 16-bit storage the fp32 master weights (sharded alike).
  out.optimizer = (mixed(l) ? 3 : 2) * (l.zero_stage >= 1 ? v * r.shard : v * r.pc) * kA;

  // Walk this rank's operations: activation sets live from F to B; sent
  // messages stay until the end of the schedule.
  const mp::Schedule s = mp::make_schedule(l.schedule, l.pp, l.micro_batches, l.v);
  const int k = l.ckpt_every;
  const double ws = k > 0 ? k * r.act_block : 0;
  const double keep = k > 0 ? (r.bpc - 1) / k : 0;
  auto set_elems = [&](int chunk) {
    if (k == 0) return r.nh + r.bpc * r.act_block;
    return r.nh * (1 + keep + (chunk == r.chunks - 1 ? 1 : 0));
  };
  const double tp_tmp = rs_tmp(r.nh, l.tp, kF), dp_tmp = rs_tmp(r.pc, l.dp, kA);
  double held = 0, act_peak = 0, msgs = 0, comm_peak = 0;
  for (const mp::Op& op : s.ranks[size_t(r.c.pp)]) {
    const bool fwd = op.kind == mp::Kind::F;
    if (fwd) held += set_elems(op.chunk);
    act_peak = std::max(act_peak, held + ws + (fwd ? 0 : r.scratch));
    comm_peak = std::max(comm_peak, msgs * r.nh * kF + tp_tmp);  // the blocks' all-reduces
    if (fwd ? op.chunk < r.chunks - 1 : op.chunk > 0) msgs += 1;
    comm_peak = std::max(comm_peak, msgs * r.nh * kF + (!fwd && l.zero_stage >= 2 ? dp_tmp : 0));
    if (!fwd) held -= set_elems(op.chunk);
  }
  if (l.zero_stage <= 1) comm_peak = std::max(comm_peak, dp_tmp);  // the optimizer phase's reduction
  out.activations = act_peak * kF;
  out.comm_buffers = comm_peak;
  return out;
}

TrafficPerStep predict_traffic(const ModelShape& m, const Layout& l, int rank) {
  const RankView r = view(m, l, rank);
  const double kF = storage_bytes(l), kA = acc_bytes(l);
  TrafficPerStep t;
  const double ops = double(l.micro_batches) * l.v;  // F ops, and B ops, of this rank
  // Tensor parallel: per block and micro-batch 2 all-reduces forward, 2
  // backward, 2 more in the recomputed forward.
  const double ar = double(l.micro_batches) * l.v * r.bpc * (4 + (l.ckpt_every > 0 ? 2 : 0));
  if (l.tp > 1) {
    t.tp_collectives = int64_t(ar);
    t.tp_bytes = ar * (rs_bytes(r.nh, l.tp, r.c.tp, kF) + ag_bytes(r.nh, l.tp, r.c.tp, kF));
  }
  // Data parallel, per chunk: stage 0 all-reduce; 1 reduce-scatter + all-gather
  // after the schedule; 2 reduce-scatter per B op + all-gather after; 3
  // all-gather per F and B op, reduce-scatter per B op. Gradients travel in
  // the accumulation type, gathered parameters in the storage type.
  double rs = 0, ag = 0;
  switch (l.zero_stage) {
    case 0: rs = ag = l.v; break;
    case 1: rs = ag = l.v; break;
    case 2: rs = ops, ag = l.v; break;
    case 3: rs = ops, ag = 2 * ops; break;
  }
  if (l.dp > 1) {
    t.dp_collectives = int64_t(l.zero_stage == 0 ? l.v : rs + ag);
    t.dp_bytes = rs * rs_bytes(r.pc, l.dp, r.c.dp, kA) + ag * ag_bytes(r.pc, l.dp, r.c.dp, l.zero_stage == 0 ? kA : kF);
  }
  t.pp_messages = mp::predicted_messages_sent(l.pp, l.micro_batches, l.v, r.c.pp);
  t.pp_bytes = double(t.pp_messages) * r.nh * kF;
  return t;
}

double predict_flops(const ModelShape& m, const Layout& l, int rank) {
  const RankView r = view(m, l, rank);
  const double n = double(r.mbs) * m.seq, h = m.hidden, hl = r.k.hl(), fl = r.k.fl, s = m.seq, d = r.k.d;
  // Forward of one block on one micro-batch: QKV, output projection and the
  // two MLP products, and per (sample, local head) Q K^T and P V.
  const double fwd = 2 * n * (3 * h * hl + hl * h + 2 * h * fl) + double(r.mbs) * r.k.heads * 2 * (2 * s * s * d);
  const double per_block = fwd * (3 + (l.ckpt_every > 0 ? 1 : 0));  // backward = 2 x forward
  return per_block * r.bpc * l.v * l.micro_batches;
}

std::vector<GemmShape> predict_gemms(const ModelShape& m, const Layout& l, int rank) {
  const RankView r = view(m, l, rank);
  const BlockAct a{r.k, Rows{r.mbs, m.seq}};
  const double per = double(l.micro_batches) * l.v * r.bpc;  // block passes of each kind per step
  std::map<GemmShape::Key, double> count;
  auto add = [&](const std::vector<BlockGemm>& gs, double times) {
    for (const BlockGemm& g : gs) count[{g.m, g.n, g.k, g.ops}] += per * times * g.count;
  };
  add(block_gemms_forward(a), l.ckpt_every > 0 ? 2 : 1);
  add(block_gemms_backward(a), 1);
  std::vector<GemmShape> out;
  for (const auto& [k, c] : count) out.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), c, std::get<3>(k)});
  return out;
}

AttentionWork predict_attention(const ModelShape& m, const Layout& l, int rank) {
  const RankView r = view(m, l, rank);
  AttentionWork a;
  a.b = r.mbs, a.s = m.seq, a.heads = r.k.heads, a.d = r.k.d;
  const double passes = double(l.micro_batches) * l.v * r.bpc;  // block passes of each kind per step
  a.forward_calls = passes * (l.ckpt_every > 0 ? 2 : 1);
  a.backward_calls = passes;
  // Softmax elements as block_elementwise_elems counts them: forward reads
  // the scores and writes P, backward reads P and dP and writes dS.
  const double probs = double(r.mbs) * r.k.heads * m.seq * m.seq;
  a.softmax_bytes = (2 * a.forward_calls + 3 * a.backward_calls) * probs * storage_bytes(l);
  return a;
}

BlockElementwise block_elementwise_elems(double n, double h, double fl, double probs) {
  BlockElementwise e;
  // Forward: 2 layer norms (read x, write y, mean, 1/std), softmax (read
  // scores, write probabilities), GeLU (read z, write GeLU(z)), 2 residual
  // adds (read two, write one).
  e.fwd = 2 * (2 * n * h + 2 * n) + 2 * probs + 2 * n * fl + 2 * 3 * n * h;
  // Backward: 2 layer norms (read x, dy, mean, 1/std, write dx and the 2h
  // parameter gradients, added in with a read-read-write each), softmax's
  // (read P, dP, write dS), GeLU's (read z, dz, write dz), 2 residual adds.
  e.bwd = 2 * (3 * n * h + 2 * n + 2 * h + 3 * 2 * h) + 3 * probs + 3 * n * fl + 2 * 3 * n * h;
  return e;
}

double predict_elementwise_bytes(const ModelShape& m, const Layout& l, int rank) {
  const RankView r = view(m, l, rank);
  const double n = double(r.mbs) * m.seq, h = m.hidden, fl = r.k.fl;
  const double probs = double(r.mbs) * r.k.heads * m.seq * m.seq;  // softmax elements of a micro-batch
  const BlockElementwise e = block_elementwise_elems(n, h, fl, probs);
  const double fwd = e.fwd, bwd = e.bwd;
  const double blocks = double(l.micro_batches) * l.v * r.bpc;
  double elems = blocks * (fwd * (l.ckpt_every > 0 ? 2 : 1) + bwd);
  // Loss gradient on the rank holding the last chunk: read output and
  // target, write the gradient, per micro-batch.
  if (r.c.pp == l.pp - 1) elems += double(l.micro_batches) * 3 * r.nh;
  // ZeRO 2, 3: a B op's blocks write their gradients into a buffer of their
  // own (the two layer norms' parameter gradients copied there, not added:
  // one read of 2h fewer each per block pass).
  if (l.zero_stage >= 2) elems -= blocks * 2 * 2 * h;
  return elems * storage_bytes(l);
}

double predict_shard_bytes(const ModelShape& m, const Layout& l, int rank) {
  const RankView r = view(m, l, rank);
  // ZeRO 2, 3: the B op's reduce-scattered shard added into this rank's
  // accumulated shard (read two, write one, in the accumulation type).
  // ZeRO 3: every F and B op first copies this rank's shard of the chunk's
  // parameters into the buffer the all-gather fills (read one, write one).
  const double ops = double(l.micro_batches) * l.v;
  double bytes = 0;
  if (l.zero_stage >= 2) bytes += ops * 3 * r.shard * acc_bytes(l);
  if (l.zero_stage == 3) bytes += 2 * ops * 2 * r.shard * storage_bytes(l);
  return bytes;
}

OptimizerElems optimizer_elems(const ModelShape& m, const Layout& l, int rank) {
  const RankView r = view(m, l, rank);
  OptimizerElems e;
  e.updated = l.v * (l.zero_stage >= 1 ? r.shard : r.pc);
  e.grads = l.v * (l.zero_stage >= 2 ? r.shard : r.pc);
  return e;
}

double optimizer_phase_bytes(const OptimizerElems& e, StorageType storage) {
  const double kA = acc_bytes(storage), kF = element_bytes(storage);
  double bytes = 7 * e.updated * kA + e.grads * kA;                       // Adam; the zero fill
  if (mixed(storage)) bytes += 3 * e.grads * kA + e.updated * (kA + kF);  // unscale and count; the rounded copy
  return bytes;
}

double predict_optimizer_bytes(const ModelShape& m, const Layout& l, int rank) {
  return optimizer_phase_bytes(optimizer_elems(m, l, rank), l.storage);
}

}  // namespace sp::hybrid
