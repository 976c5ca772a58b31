#pragma once
// The collectives of this family as one table (nccl-tests style): what each
// collective computes, whether it reduces and whether it has a root, and its
// bus-bandwidth factor. The algorithms that implement each one are records
// of algorithms.cpp (algorithm.hpp); the registered techniques and `scaleproof nccl-tests`
// are both generated from the two tables.
#include <string>
#include <vector>

namespace sp::coll {

enum class Coll { all_reduce, reduce_scatter, all_gather, broadcast, reduce };

struct CollInfo {
  Coll id;
  std::string name;  // technique name and the nccl-tests -c value
  std::string summary;
  bool has_op;             // reduces (sum, max, min)
  bool has_root;           // rooted (broadcast, reduce)
  double min_vs_baseline;  // declared throughput band vs the vendor at p >= 2
  // nccl-tests' bus-bandwidth factor F(p): busbw = algbw * F, chosen so that
  // busbw is the per-link rate of an optimal algorithm, comparable across
  // collectives and rank counts (docs/collectives.md, "Bus bandwidth").
  double (*busbw_factor)(int p);
};

const std::vector<CollInfo>& collectives();
const CollInfo& coll_info(const std::string& name);  // throws InputError naming the choices
const CollInfo& coll_info(Coll id);

}  // namespace sp::coll
