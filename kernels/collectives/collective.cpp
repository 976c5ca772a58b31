#include "kernels/collectives/collective.hpp"

#include <stdexcept>

#include "scaleproof/params.hpp"

namespace sp::coll {

const std::vector<CollInfo>& collectives() {
  // min_vs_baseline: the ring all-reduce must reach >= 90% of
  // MPI_Allreduce's throughput, and the ring's two halves (reduce-scatter,
  // all-gather) the same share of MPICH's; the pipelined chain broadcast and
  // reduce are declared to reach at least half of MPICH
  // (docs/collectives.md, "Verdicts").
  static const std::vector<CollInfo> t = {
      {Coll::all_reduce, "all_reduce", "every rank gets op over all ranks' buffers", true, false, 0.9,
       [](int p) { return 2.0 * (p - 1) / p; }},
      {Coll::reduce_scatter, "reduce_scatter", "rank r gets chunk r of op over all buffers", true, false, 0.9,
       [](int p) { return (p - 1.0) / p; }},
      {Coll::all_gather, "all_gather", "every rank gets every rank's chunk", false, false, 0.9,
       [](int p) { return (p - 1.0) / p; }},
      {Coll::broadcast, "broadcast", "every rank gets root's buffer", false, true, 0.5, [](int) { return 1.0; }},
      {Coll::reduce, "reduce", "root gets op over all buffers", true, true, 0.5, [](int) { return 1.0; }},
  };
  return t;
}

const CollInfo& coll_info(const std::string& name) {
  std::string names;
  for (auto& c : collectives()) {
    if (c.name == name) return c;
    names += (names.empty() ? "" : ", ") + c.name;
  }
  throw InputError("unknown collective '" + name + "' (" + names + ")");
}

const CollInfo& coll_info(Coll id) {
  for (auto& c : collectives())
    if (c.id == id) return c;
  throw std::logic_error("collective not in the table");
}

}  // namespace sp::coll
