#pragma once
// Step time of one hybrid-parallel layout from a description of its work and
// the machine's measured figures (docs/planner.md, "Time model"):
//   compute   = sum over GEMM shapes of count 2MNK / rate(shape)
//               + element-wise bytes / element-wise bandwidth
//   group g   = latency_steps alpha_g + bytes_sent beta_g + bytes_reduced gamma_g
//               (Hockney's alpha-beta-gamma, the form of the ring algorithms)
//   pipeline  = (compute + tensor-parallel + point-to-point) / (1 - f),
//               f = mp::predicted_bubble(schedule, p, m, v), the bubble's
//               share of the pipelined phase
//   step      = pipeline + data-parallel collectives (after the pipeline
//               drains; not overlapped with it)
// All quantities are per rank and per step; the work description is filled
// from a cost model (the planner) or by hand (tests), never measured here.
#include <cstdint>
#include <map>
#include <tuple>
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

// One matrix-product shape C[M x N] += A[M x K] B[K x N] and how many times a
// rank runs it per step; each is 2 M N K FLOPs.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  double count = 0;
  double flops() const { return 2.0 * double(m) * double(n) * double(k) * count; }
  std::tuple<int64_t, int64_t, int64_t> key() const { return {m, n, k}; }
};

struct StepWork {
  std::vector<GemmShape> gemms;          // every GEMM shape this rank runs per step, each shape once
  double elementwise_bytes = 0;          // bytes the element-wise passes read and write per step
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
  // FLOP/s measured at a shape (M, N, K); looked up before gemm_flops.
  std::map<std::tuple<int64_t, int64_t, int64_t>, double> gemm_rate;
  // Bytes per second of the element-wise passes; 0: not measured, the
  // element-wise term is left out (named figures and presets).
  double elementwise_bw = 0;
  Link tp, dp, pp;  // per group; on one node usually the same link
  double rate(const GemmShape& g) const {
    auto it = gemm_rate.find(g.key());
    return it == gemm_rate.end() ? gemm_flops : it->second;
  }
};

struct StepTime {
  double compute = 0, tp = 0, pp = 0, dp = 0;  // seconds of each part
  double gemm = 0, elementwise = 0;            // compute = gemm + elementwise
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
