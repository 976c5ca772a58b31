#include "suites/collectives/table.hpp"

#include "scaleproof/params.hpp"

namespace sp::coll {

const std::vector<CollInfo>& collectives() {
  // min_vs_baseline: the target (ring all-reduce >= 90% of
  // MPI_Allreduce) also applies to the ring's two halves; the pipelined
  // chain broadcast/reduce is declared to reach at least half of MPICH.
  static const std::vector<CollInfo> t = {
      {Coll::all_reduce,
       "all_reduce",
       "every rank gets op over all ranks' buffers",
       true,
       false,
       {"ring", "rabenseifner", "recursive_doubling", "param_server"},
       0.9},
      {Coll::reduce_scatter,
       "reduce_scatter",
       "rank r gets chunk r of op over all buffers",
       true,
       false,
       {"ring"},
       0.9},
      {Coll::all_gather, "all_gather", "every rank gets every rank's chunk", false, false, {"ring"}, 0.9},
      {Coll::broadcast, "broadcast", "every rank gets root's buffer", false, true, {"ring", "binomial"}, 0.5},
      {Coll::reduce, "reduce", "root gets op over all buffers", true, true, {"ring", "binomial"}, 0.5},
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

std::vector<std::string> vendor_algorithms() {
  std::vector<std::string> v;
#ifdef SP_HAVE_MPI
  v.push_back("mpi");
#endif
#ifdef SP_HAVE_NCCL
  v.push_back("nccl");
#endif
  return v;
}

bool is_vendor(const std::string& algo) { return algo == "mpi" || algo == "nccl"; }

bool needs_power_of_two(const std::string& algo) { return algo == "rabenseifner" || algo == "recursive_doubling"; }

bool has_model(const std::string& algo) { return !is_vendor(algo) && algo != "ring_nccl"; }

std::vector<std::string> all_algorithms(const CollInfo& c) {
  auto v = c.algorithms;
#ifdef SP_HAVE_NCCL
  // The project's ring over NCCL send/recv on device memory.
  if (c.id == Coll::all_reduce || c.id == Coll::reduce_scatter || c.id == Coll::all_gather) v.push_back("ring_nccl");
#endif
  for (auto& a : vendor_algorithms()) v.push_back(a);
  return v;
}

}  // namespace sp::coll
