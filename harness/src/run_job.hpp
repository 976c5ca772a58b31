#pragma once
// `scaleproof bench` and `scaleproof run`. A run started outside any MPI
// launcher is a main job: it runs the single-rank techniques in this process
// and launches the multi-rank ones itself (main_job.hpp), then judges and
// reports everything as one results folder.
#include <string>
#include <vector>

#include "db/db.hpp"
#include "manifest.hpp"
#include "selection.hpp"

namespace sp {

struct RunOptions {
  std::vector<std::string> families, techniques, variants, sets, sizes;
  std::string out = "results";
  std::string name;
  double min_time = 0.2;
  int repetitions = 3;
  bool strict = false;
  // The main job's launch of its multi-rank techniques.
  std::string launcher;   // "" = mpiexec -n {n} (srun --mpi=pmi2 -n {n} inside a Slurm allocation)
  int ranks = 0;          // 0 = the default rank count (main_job.hpp)
  bool one_rank = false;  // the multi-rank techniques run in this process at one rank
  double timeout_s = 0;   // the watchdog's --timeout (no progress for that long), also given to the launch; 0 = default
  bool part = false;      // this process is the launched part of a main job
  db::Options db;         // where the committed results folder is recorded
};

// The size a subcommand runs when no --size is given.
inline constexpr Size kDefaultRunSize = Size::small;

Filter make_filter(const RunOptions& o, Size default_size);
// One console line naming the techniques a selection skipped for their rank rule.
void print_skipped(const std::vector<std::string>& skipped, int nranks);
int cmd_bench(const RunOptions& o, const RunContext& rc);
int cmd_run(const RunOptions& o, const RunContext& rc);

}  // namespace sp
