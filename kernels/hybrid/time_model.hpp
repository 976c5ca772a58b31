#pragma once
// Step time of one hybrid-parallel layout from a description of its work and
// the machine's measured figures (docs/planner.md, "Time model"):
//   compute   = sum over GEMM shapes of count 2MNK / rate(shape)
//               + element-wise bytes / element-wise bandwidth
//               + ZeRO shard bytes / the optimizer kernels' bandwidth
//               where the attention core's time per call is measured at
//               the step's shape: its calls times that time, in place of
//               its batched products and its softmax bytes in the two sums
//   group g   = latency_steps alpha_g + bytes_sent beta_g + bytes_reduced gamma_g
//               (Hockney's alpha-beta-gamma, the form of the ring algorithms)
//   pipeline  = (compute + tensor-parallel + point-to-point) / (1 - f),
//               f = mp::predicted_bubble(schedule, p, m, v), the bubble's
//               share of the pipelined phase
//   optimizer = optimizer bytes / the optimizer kernels' bandwidth (Adam,
//               the gradients' zero fill; with 16-bit storage unscaling and
//               the rounded copy), after the pipeline drains
//   step      = pipeline + data-parallel collectives + optimizer (after the
//               pipeline drains; not overlapped with it)
// All quantities are per rank and per step; the work description is filled
// from a cost model (the planner) or by hand (tests), never measured here.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/modelparallel/schedule.hpp"

namespace sp::hybrid {

// What one rank's collectives over one group cost in the alpha-beta-gamma
// terms: a ring all-reduce of n bytes on g ranks is 2(g-1) latency steps,
// 2(g-1)/g n bytes sent and (g-1)/g n bytes reduced.
struct GroupWork {
  double latency_steps = 0;
  double bytes_sent = 0;
  double bytes_reduced = 0;
};

// Which operand of C = op(A) op(B) is stored transposed: the backward's
// products read a weight or an activation as stored, so they run A B^T
// (input gradients) and A^T B (weight gradients); nn::gemm packs a
// transposed operand differently, and at few rows its rate differs.
enum class GemmOps { nn, nt, tn };
const char* to_string(GemmOps o);
bool parse_gemm_ops(const std::string& s, GemmOps& out);  // "nn", "nt", "tn"

// One matrix-product shape C[M x N] += op(A)[M x K] op(B)[K x N] and how many
// times a rank runs it per step; each is 2 M N K FLOPs.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  double count = 0;
  GemmOps ops = GemmOps::nn;
  double flops() const { return 2.0 * double(m) * double(n) * double(k) * count; }
  using Key = std::tuple<int64_t, int64_t, int64_t, GemmOps>;
  Key key() const { return {m, n, k, ops}; }
};

// The causal attention core (batched products over (sample, head) and the
// softmax between them) of every block pass of a step: its shape per call
// (b samples of s tokens, `heads` local heads of d columns) and its calls.
// A forward call runs, per (sample, head), Q K^T (s x s x d) and P V
// (s x d x s); a backward call dO V^T (s x s x d) and dS K, dS^T Q, P^T dO
// (s x d x s). Those products are among StepWork::gemms and the softmax's
// bytes among its element-wise bytes.
struct AttentionWork {
  int b = 0, s = 0, heads = 0, d = 0;
  double forward_calls = 0, backward_calls = 0;
  double softmax_bytes = 0;  // of the element-wise bytes, the softmax passes' (forward and backward)
  std::tuple<int, int, int, int> key() const { return {b, s, heads, d}; }
  // How many of the products of shape g the core runs per step (g's count includes them).
  double products(const GemmShape& g) const;
};

struct StepWork {
  std::vector<GemmShape> gemms;          // every GEMM shape this rank runs per step, each shape once
  double elementwise_bytes = 0;          // bytes the schedule's element-wise passes read and write per step
  double shard_bytes = 0;                // bytes the schedule's ZeRO shard passes stream (in the element-wise term)
  double optimizer_bytes = 0;            // bytes the phase after the schedule streams (Adam and the rest)
  AttentionWork attention;               // the attention core, a part of both
  GroupWork tp, dp;                      // tensor- and data-parallel collectives
  double pp_messages = 0, pp_bytes = 0;  // pipeline point-to-point sends
  mp::ScheduleKind schedule = mp::ScheduleKind::one_f_one_b;
  int p = 1, m = 1, v = 1;
};

struct Link {
  double alpha = 0;  // seconds per message (latency step)
  double beta = 0;   // seconds per byte sent
  double gamma = 0;  // seconds per byte reduced
};

struct MachineFigures {
  double gemm_flops = 0;  // FLOP/s of a GEMM whose shape has no rate of its own
  // FLOP/s measured at a shape and operand layout (GemmShape::key()); looked
  // up first, then the same shape's A B rate, then gemm_flops.
  std::map<GemmShape::Key, double> gemm_rate;
  // Bytes per second of the element-wise passes; 0: not measured, the
  // element-wise term is left out (named figures and presets).
  double elementwise_bw = 0;
  // Bytes per second of the optimizer phase's kernels, measured over the
  // elements a rank updates, also charged for the ZeRO shard passes; 0: the
  // element-wise bandwidth stands in.
  double optimizer_bw = 0;
  double streaming_bw() const { return optimizer_bw > 0 ? optimizer_bw : elementwise_bw; }
  // Seconds per forward and per backward call of the attention core
  // measured at a shape AttentionWork::key(); where the work's shape has
  // them they replace its products' and softmax's share of the two terms.
  std::map<std::tuple<int, int, int, int>, std::pair<double, double>> attention_seconds;
  Link tp, dp, pp;  // per group; on one node usually the same link
  double rate(const GemmShape& g) const {
    auto it = gemm_rate.find(g.key());
    if (it == gemm_rate.end()) it = gemm_rate.find({g.m, g.n, g.k, GemmOps::nn});
    return it == gemm_rate.end() ? gemm_flops : it->second;
  }
};

struct StepTime {
  double compute = 0, tp = 0, pp = 0, dp = 0;  // seconds of each part
  double gemm = 0, elementwise = 0;            // compute = gemm + elementwise + attention; elementwise: layers + shards
  double attention = 0;                        // the attention core where measured, else 0 (in the other two)
  double optimizer = 0;                        // the optimizer phase's kernels (0 when no bandwidth is known)
  double bubble = 0;                           // seconds idle in the pipeline's fill and drain
  double bubble_fraction = 0;                  // f, of the pipelined phase
  double total = 0;
  double comm_share() const { return total > 0 ? (tp + pp + dp) / total : 0.0; }
};

double group_seconds(const GroupWork& w, const Link& l);
double total_flops(const StepWork& w);
// Needs gemm_flops > 0 (or a rate for every shape) and a schedule shape mp::check_shape accepts.
StepTime predict_step_time(const StepWork& w, const MachineFigures& mf);

}  // namespace sp::hybrid
