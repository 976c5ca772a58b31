#pragma once
// Step time of one hybrid-parallel layout from a description of its work and
// the machine's measured figures (docs/planner.md, "Time model"):
//   compute   = FLOPs / GEMM rate
//   group g   = latency_steps alpha_g + bytes_sent beta_g + bytes_reduced gamma_g
//               (Hockney's alpha-beta-gamma, the form of the ring algorithms)
//   pipeline  = (compute + tensor-parallel + point-to-point) / (1 - f),
//               f = mp::predicted_bubble(schedule, p, m, v), the bubble's
//               share of the pipelined phase
//   step      = pipeline + data-parallel collectives (after the pipeline
//               drains; not overlapped with it)
// All quantities are per rank and per step; the work description is filled
// from a cost model (the planner) or by hand (tests), never measured here.
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

struct StepWork {
  double flops = 0;                      // this rank's floating-point operations per step
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
  double gemm_flops = 0;  // FLOP/s one rank's GEMMs reach
  Link tp, dp, pp;        // per group; on one node usually the same link
};

struct StepTime {
  double compute = 0, tp = 0, pp = 0, dp = 0;  // seconds of each part
  double bubble = 0;                           // seconds idle in the pipeline's fill and drain
  double bubble_fraction = 0;                  // f, of the pipelined phase
  double total = 0;
  double comm_share() const { return total > 0 ? (tp + pp + dp) / total : 0.0; }
};

double group_seconds(const GroupWork& w, const Link& l);
// Needs gemm_flops > 0 and a schedule shape mp::check_shape accepts.
StepTime predict_step_time(const StepWork& w, const MachineFigures& mf);

}  // namespace sp::hybrid
