#pragma once
// One pipeline configuration, set up and run over a transport: shared by the
// pipeline techniques (timed and checked by the harness) and the
// `scaleproof pipeline` command (timelines).
#include <memory>
#include <string>
#include <vector>

#include "kernels/modelparallel/pipeline_executor.hpp"
#include "scaleproof/technique.hpp"

namespace sp::mp {

struct PipeConfig {
  ScheduleKind kind = ScheduleKind::one_f_one_b;
  int p = 1, m = 1, v = 1, layers = 1, h = 1, rows = 1;
  static PipeConfig from(ScheduleKind k, const Params& params, int p);  // p = ranks of the pipeline
  void validate() const;                                                // InputError naming the problem
  size_t act_elems() const { return static_cast<size_t>(rows) * h; }
};

struct PipeRun {
  PipeConfig cfg;
  std::unique_ptr<PipelineExecutor> ex;
  std::vector<Mat> inputs, out_grads;
  PipeStats last;
  void setup(comm::Transport& t, const PipeConfig& c);
  PipeStats step();  // one step (callers synchronise first), this rank's statistics
};

// Deterministic model and data, the same on every rank.
Mat pipe_weight(int layer, int h);
std::vector<double> pipe_input(int mb, const PipeConfig& c);
std::vector<double> pipe_out_grad(int mb, const PipeConfig& c);

// Collectives on the pipeline's own ranks (its transport's communicator).
void barrier(comm::Transport& t);
// Every rank's vector on rank 0 (empty elsewhere).
std::vector<std::vector<double>> gather_to_root(comm::Transport& t, const std::vector<double>& mine);
// Mean bubble the schedule would have with the last step's measured operation
// durations and instant messages (the independent validator replays it): what
// the schedule's structure and the uneven compute times alone explain. Valid
// on rank 0; collective.
double replay_bubble(comm::Transport& t, const PipeRun& run);

// This rank's outputs, input gradients and weight gradients against (1) the
// same kernels run sequentially on one rank, exactly (bound 0), and (2) the
// plain-loop bounded reference.
CheckResult pipe_check(PipeRun& run, int rank);

}  // namespace sp::mp
