// Schedule generators, following Megatron-LM megatron/core/pipeline_parallel/schedules.py:
// warm-up forwards, a steady one-forward-one-backward phase, cool-down backwards.
#include "kernels/modelparallel/schedule.hpp"

#include <algorithm>

#include "scaleproof/params.hpp"

namespace sp::mp {

ScheduleKind parse_schedule(const std::string& name) {
  if (name == "gpipe") return ScheduleKind::gpipe;
  if (name == "1f1b") return ScheduleKind::one_f_one_b;
  if (name == "interleaved") return ScheduleKind::interleaved;
  throw InputError("unknown pipeline schedule '" + name + "' (gpipe, 1f1b or interleaved)");
}

std::string to_string(ScheduleKind k) {
  switch (k) {
    case ScheduleKind::gpipe: return "gpipe";
    case ScheduleKind::one_f_one_b: return "1f1b";
    case ScheduleKind::interleaved: return "interleaved";
  }
  return "?";
}

void check_shape(ScheduleKind k, int p, int m, int v, int layers) {
  if (p < 1 || m < 1 || v < 1) throw InputError("pipeline: p, m and v must be >= 1");
  if (k != ScheduleKind::interleaved && v != 1)
    throw InputError("pipeline: v = " + std::to_string(v) + " needs the interleaved schedule (" + to_string(k) +
                     " has v = 1)");
  if (k == ScheduleKind::interleaved && m % p != 0)
    throw InputError("pipeline: interleaved schedule needs m % p == 0 (m = " + std::to_string(m) +
                     ", p = " + std::to_string(p) + ")");
  if (layers < p * v)
    throw InputError("pipeline: " + std::to_string(layers) + " layers cannot fill p*v = " + std::to_string(p * v) +
                     " chunks");
}

namespace {

// Megatron's warm-up count for rank i (forwards before the first backward).
int warmup(ScheduleKind k, int p, int m, int v, int i) {
  const int total = m * v;
  switch (k) {
    case ScheduleKind::gpipe: return m;
    case ScheduleKind::one_f_one_b: return std::min(p - i - 1, m);
    case ScheduleKind::interleaved:
      // With m == p there is no steady phase: every forward runs first.
      if (m == p) return total;
      return std::min(2 * (p - i - 1) + (v - 1) * p, total);
  }
  return 0;
}

// The k-th forward (or backward) of rank i: which micro-batch and global chunk.
// Micro-batches go through the local chunks in groups of p: chunk j takes
// micro-batches g p .. g p + p - 1 of group g (backwards walk chunks in reverse).
Op nth_op(Kind kind, int k, int p, int v, int i) {
  const int in_group = k % (p * v);
  int local = in_group / p;
  if (kind == Kind::B) local = v - 1 - local;
  const int mb = (k / (p * v)) * p + in_group % p;
  return {kind, mb, local * p + i};
}

}  // namespace

Schedule make_schedule(ScheduleKind k, int p, int m, int v) {
  Schedule s{k, p, m, v, std::vector<std::vector<Op>>(p)};
  const int total = m * v;
  for (int i = 0; i < p; ++i) {
    auto& ops = s.ranks[i];
    const int w = warmup(k, p, m, v, i);
    int f = 0, b = 0;
    for (; f < w; ++f) ops.push_back(nth_op(Kind::F, f, p, v, i));
    while (f < total) {  // steady state: one forward, one backward
      ops.push_back(nth_op(Kind::F, f++, p, v, i));
      ops.push_back(nth_op(Kind::B, b++, p, v, i));
    }
    while (b < total) ops.push_back(nth_op(Kind::B, b++, p, v, i));
  }
  return s;
}

LayerRange chunk_layers(int layers, int chunks, int c) {
  const int base = layers / chunks, extra = layers % chunks;
  return {c * base + std::min(c, extra), base + (c < extra ? 1 : 0)};
}

double predicted_bubble(ScheduleKind k, int p, int m, int v) {
  // GPipe and 1F1B: (p-1)/(m+p-1) of the step (Huang et al. 2019; Narayanan et al. 2021).
  // Interleaved: the bubble shrinks v-fold relative to ideal compute, (1/v)(p-1)/m,
  // i.e. (p-1)/(v m + p - 1) of the step (Narayanan et al. SC'21, sec. 2.2.2).
  const double vv = k == ScheduleKind::interleaved ? v : 1;
  return (p - 1) / (vv * m + p - 1);
}

int predicted_peak_stash(ScheduleKind k, int p, int m, int v, int rank) {
  const int w = warmup(k, p, m, v, rank);
  return std::min(w + 1, m * v);
}

long long predicted_messages_sent(int p, int m, int v, int rank) {
  if (p == 1) return 0;
  const int acts = v - (rank == p - 1 ? 1 : 0);  // the model's last chunk sends no activation
  const int grads = v - (rank == 0 ? 1 : 0);     // the first chunk sends no gradient
  return static_cast<long long>(m) * (acts + grads);
}

}  // namespace sp::mp
