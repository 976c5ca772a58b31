#pragma once
// `scaleproof plan --verify K` (docs/planner.md, "Verification"): the top K
// layouts and K more spread over the ranking, run with the composed step at a
// scaled-down shape on the ranks at hand, predicted vs measured step time,
// judged by the mean absolute relative error and Spearman's rank correlation.
#include <string>
#include <vector>

#include "suites/hybrid/plan_search.hpp"

namespace sp::hybrid::plan {

// Declared bands of the two verdicts.
inline constexpr double kMaxMeanAbsError = 0.10;
inline constexpr double kMinSpearman = 0.9;

// Indices into a ranking of n layouts: 0..K-1, then K more evenly spread over
// K..n-1 (both ends included for K >= 2, the middle one for K = 1); every
// index once, ascending. Fewer when n is small.
std::vector<int> pick_verified(int n, int k);

// Spearman's rho with average ranks for ties: the Pearson correlation of the
// ranks. NaN when fewer than 2 pairs or a side has a single rank value.
double spearman(const std::vector<double>& a, const std::vector<double>& b);
// Mean over i of |predicted_i - measured_i| / measured_i (measured > 0).
double mean_abs_rel_error(const std::vector<double>& predicted, const std::vector<double>& measured);

// The shape --verify plans and runs: small enough for a step to take tens of
// milliseconds on one CPU core per rank, large enough for its GEMMs to
// dominate. 2 heads per rank (any tp dividing the ranks divides them) of 32
// columns, 8 blocks (pp x v up to 8), 64 tokens, 8 sequences per rank, no
// vocabulary (the composed step is embedding-free).
ModelShape scale_down(int ranks);

struct VerifyRow {
  Candidate planned;
  int position = 0;     // 0-based place in the ranking
  double measured = 0;  // seconds per step
  // The step's own parts (its counters busy_s_per_step, optimizer_s_per_step):
  // seconds per step in F and B operations and in the phase after the
  // schedule; -1 where the step does not report them.
  double measured_busy = -1, measured_optimizer = -1;
};
struct VerifyResult {
  MachineFigures machine;  // measured on the same ranks
  ModelShape model;
  std::vector<VerifyRow> rows;
  std::vector<std::string> refused;  // picked layouts the step's validate() refused, with why
  double mae = 0, rho = 0;
  bool mae_pass = false, rho_pass = false;
};

// The technique that runs one step of a layout: hybrid_step, whose
// parameters are layers, hidden, heads, seq, batch, dp, tp, pp, v, mb,
// schedule, zero, storage, ckpt and steps.
inline constexpr const char* kComposedStep = "hybrid_step";
// The technique that measures the ranking's GEMM rate: the step's own
// product (nn::gemm) at one shape and storage type, operands from memory.
inline constexpr const char* kStepGemm = "step_gemm";

// InputError unless `step` and the techniques that measure the machine
// (step_gemm, all_reduce, stream_triad) are in this build:
// looked up by name at run time.
void check_verifiable(const std::string& step = kComposedStep);

// InputError unless the composed step accepts `storage` on `ranks` ranks (its
// own validate() at the scaled-down shape, data-parallel over every rank):
// called before anything is launched or measured.
void check_storage_runs(StorageType storage, int ranks, const std::string& step = kComposedStep);

// Runs on every rank of the job (all must call it); InputError as
// check_verifiable(), or when the job has fewer than 2 ranks.
// memory_bytes: the budget per rank (0: the node's memory divided by the ranks).
VerifyResult verify(int k, StorageType storage, double min_time, const std::string& step = kComposedStep,
                    double memory_bytes = 0);

}  // namespace sp::hybrid::plan
