#pragma once
// An independent validator of pipeline schedules: it knows nothing of how the
// schedules were generated or executed, only the dependency rules, and
// simulates the per-rank operation lists the way the executor runs them
// (each rank in its own order, an operation starts once its inputs exist).
//
// Checks: every operation sits on the rank owning its chunk (c % p); every
// (micro-batch, chunk) is forwarded exactly once and backwarded exactly once;
// F(mb, c) after F(mb, c-1); B(mb, c) after F(mb, c) and after B(mb, c+1);
// no deadlock (some rank can always proceed until all lists are done).
#include <functional>
#include <string>
#include <vector>

#include "kernels/modelparallel/schedule.hpp"

namespace sp::reference {

struct ScheduleSim {
  bool ok = false;
  std::string error;                       // first violation found ("" when ok)
  double makespan = 0;                     // simulated step time
  std::vector<double> busy;                // per rank: time spent computing
  std::vector<int> peak_stash;             // per rank: most (mb, chunk) activation sets held at once
  std::vector<std::vector<double>> start;  // per rank, per op: simulated start time
  double bubble(int rank) const { return makespan > 0 ? 1 - busy[rank] / makespan : 0; }
};

// tf, tb: time of one forward / backward of one chunk (uniform chunks).
ScheduleSim simulate_schedule(const std::vector<std::vector<mp::Op>>& ranks, int p, int m, int v, double tf, double tb);
// cost(rank, k): time of rank's k-th operation (e.g. measured durations, to
// replay a run without its communication and scheduling delays).
ScheduleSim simulate_schedule(const std::vector<std::vector<mp::Op>>& ranks, int p, int m, int v,
                              const std::function<double(int, size_t)>& cost);

}  // namespace sp::reference
