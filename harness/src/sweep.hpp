#pragma once
// `scaleproof scale`: one technique at a list of rank counts (through the MPI
// launcher) or OpenMP thread counts, strong or weak. Each point is a child
// `scaleproof bench` launch under the watchdog; its results folder is kept
// under points/, and sweep.json records every launch and, per (variant,
// parameter set), the median time at each point, read from the child's
// bench.json (data flows one way: results JSON -> fits -> verdicts -> report).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "launch.hpp"
#include "selection.hpp"

namespace sp {

struct SweepOptions {
  std::string technique;
  std::vector<std::string> variants, sets;
  std::string size = "small";
  std::string mode = "strong";     // strong | weak
  std::vector<int> ranks = {1};    // rank counts (the swept axis when it has > 1 entry)
  std::vector<int> threads = {1};  // OpenMP threads per rank (the axis when it has > 1 entry)
  std::string launcher;            // "" = mpiexec, or srun --mpi=pmi2 inside Slurm
  double timeout_s = 300;
  double min_time = 0.2;
  int repetitions = 3;
  double band = -1;  // < 0: the technique's Tolerance::scaling_band
  // The time of a point: "median" over repetitions (default) or "min", the
  // best repetition (STREAM's choice), more robust on a shared, loaded machine.
  std::string statistic = "median";
};

// Everything validated before anything is written or launched.
struct SweepPlan {
  SweepOptions opt;
  Launcher launcher;
  const Registered* tech = nullptr;
  std::string axis;                   // ranks | threads
  std::string weak_param;             // weak mode: the parameter multiplied by N
  std::vector<Case> cases;            // the base cases (N = 1 shapes)
  std::vector<std::string> left_out;  // why variants of "all" were left out (a rank count they cannot use)
  std::vector<int> counts() const { return axis == "ranks" ? opt.ranks : opt.threads; }
  Params params_at(const Case& c, int n) const;  // weak: weak_param x n
};

SweepPlan plan_sweep(const SweepOptions& opt);  // throws InputError

// Runs every point; `dir` is the (temporary) results folder. Returns
// sweep.json's content. Progress lines go to stdout.
nlohmann::json run_sweep(const SweepPlan& plan, const std::string& dir);

}  // namespace sp
