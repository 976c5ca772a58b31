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
  void validate() const;                               // InputError naming the problem
  size_t act_elems() const { return static_cast<size_t>(rows) * h; }
};

struct PipeRun {
  PipeConfig cfg;
  std::unique_ptr<PipelineExecutor> ex;
  std::vector<Mat> inputs, out_grads;
  PipeStats last;
  void setup(coll::Transport& t, const PipeConfig& c);
  PipeStats step();  // one step (callers synchronise first), this rank's statistics
};

// Deterministic model and data, the same on every rank.
Mat pipe_weight(int layer, int h);
std::vector<double> pipe_input(int mb, const PipeConfig& c);
std::vector<double> pipe_out_grad(int mb, const PipeConfig& c);

// This rank's outputs, input gradients and weight gradients against (1) the
// same kernels run sequentially on one rank, exactly (bound 0), and (2) the
// plain-loop bounded reference.
CheckResult pipe_check(PipeRun& run, int rank);

}  // namespace sp::mp
