#pragma once
// Pipeline schedules as explicit per-rank lists of forward (F) and backward
// (B) operations, the form Megatron-LM's schedules.py executes them in
// (forward_backward_pipelining_without_interleaving / _with_interleaving).
//
// The model is cut into C = p*v chunks (global chunk index c = 0..C-1, in
// model order); chunk c lives on rank c % p, so rank i holds chunks
// i, i+p, i+2p, ... (the interleaved virtual pipeline; v = 1 is the plain
// pipeline). F(mb, c) needs F(mb, c-1)'s output; B(mb, c) needs F(mb, c) on
// the same rank and B(mb, c+1)'s input gradient. docs/modelparallel.md,
// "Pipeline parallelism".
#include <string>
#include <vector>

namespace sp::mp {

enum class Kind : char { F = 'F', B = 'B' };

struct Op {
  Kind kind;
  int mb;     // micro-batch 0..m-1
  int chunk;  // global chunk 0..p*v-1
  bool operator==(const Op& o) const { return kind == o.kind && mb == o.mb && chunk == o.chunk; }
};

enum class ScheduleKind { gpipe, one_f_one_b, interleaved };

struct Schedule {
  ScheduleKind kind;
  int p = 1, m = 1, v = 1;
  std::vector<std::vector<Op>> ranks;  // ranks[i] = rank i's operations in execution order
  int chunks() const { return p * v; }
};

ScheduleKind parse_schedule(const std::string& name);  // gpipe | 1f1b | interleaved; throws InputError
std::string to_string(ScheduleKind k);

// The shape rules, one-line InputError each: p, m, v >= 1; v == 1 unless
// interleaved; interleaved needs m % p == 0 (the rule Megatron-LM asserted
// until late 2024); a model of `layers` layers needs layers >= p*v (every
// chunk holds at least one layer).
void check_shape(ScheduleKind k, int p, int m, int v, int layers);

// The per-rank operation lists (check_shape must accept the shape).
Schedule make_schedule(ScheduleKind k, int p, int m, int v);

// Layers of chunk c when `layers` are split over C chunks as evenly as possible
// (the first layers % C chunks hold one more): [first, first + count).
struct LayerRange {
  int first, count;
};
LayerRange chunk_layers(int layers, int chunks, int c);

// Predictions of docs/modelparallel.md for the shape (fractions of step time).
double predicted_bubble(ScheduleKind k, int p, int m, int v);
// Peak number of (micro-batch, chunk) activation sets rank i holds at once:
// GPipe m; 1F1B min(p - i, m); interleaved min(warm-up + 1, m v) with
// Megatron's warm-up 2(p - i - 1) + (v - 1) p (all m v when m == p).
int predicted_peak_stash(ScheduleKind k, int p, int m, int v, int rank);
// Point-to-point messages rank i sends per step: an activation per micro-batch
// for each of its chunks except the model's last, a gradient for each except
// the first (0 when p == 1: neighbours are local).
long long predicted_messages_sent(int p, int m, int v, int rank);

}  // namespace sp::mp
