#pragma once
// Peak number of (micro-batch, chunk) activation sets stage i of p holds at
// once, in closed form from each schedule's definition, written apart from
// the generators (kernels/modelparallel/schedule.cpp) so that a wrong warm-up
// there cannot agree with itself here. A set is stashed by its forward and
// freed by its backward.
//  - GPipe (Huang et al. 2019): every forward of the step before any
//    backward: all m sets.
//  - 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage i runs p - i - 1
//    forwards, then alternates one forward, one backward: p - i sets in
//    flight, never more than the m micro-batches.
//  - Interleaved 1F1B (Narayanan et al. SC'21, Megatron-LM's schedule):
//    v chunks per stage, 2 (p - i - 1) + (v - 1) p warm-up forwards, then
//    one forward, one backward: warm-up + 1 sets, at most the m v the step
//    has; with m == p the step has no steady phase and holds all m v.
#include <algorithm>

namespace sp::reference {

enum class PipeSchedule { gpipe, one_f_one_b, interleaved };

inline int peak_stash_sets(PipeSchedule s, int p, int m, int v, int stage) {
  switch (s) {
    case PipeSchedule::gpipe: return m;
    case PipeSchedule::one_f_one_b: return std::min(p - stage, m);
    case PipeSchedule::interleaved:
      if (m == p) return m * v;
      return std::min(2 * (p - stage - 1) + (v - 1) * p + 1, m * v);
  }
  return -1;
}

}  // namespace sp::reference
