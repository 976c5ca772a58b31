#pragma once
// The collectives of this family as one table (nccl-tests style): what each
// collective is, which algorithms implement it, its parameters. The
// registered techniques and the `scaleproof nccl-tests` command are both
// generated from this table and share one engine (engine.hpp).
#include <string>
#include <vector>

namespace sp::coll {

enum class Coll { all_reduce, reduce_scatter, all_gather, broadcast, reduce };

struct CollInfo {
  Coll id;
  std::string name;  // technique name and the nccl-tests -c value
  std::string summary;
  bool has_op;                          // reduces (sum, max, min)
  bool has_root;                        // rooted (broadcast, reduce)
  std::vector<std::string> algorithms;  // the project's, the model's reference algorithm first
  double min_vs_baseline;               // declared throughput band vs the vendor at p >= 2
};

const std::vector<CollInfo>& collectives();
const CollInfo& coll_info(const std::string& name);  // throws InputError naming the choices
const CollInfo& coll_info(Coll id);

// Vendor algorithms compiled into this build: "mpi" (MPICH, host memory),
// "nccl" (device memory, CUDA builds with NCCL).
std::vector<std::string> vendor_algorithms();
bool is_vendor(const std::string& algo);
bool needs_power_of_two(const std::string& algo);
// Project algorithms the alpha-beta model predicts (calibrated on the MPI
// transport; ring_nccl would need a device ping-pong, not done here).
bool has_model(const std::string& algo);
// Every algorithm of a collective in this build (project first, then vendor).
std::vector<std::string> all_algorithms(const CollInfo& c);

}  // namespace sp::coll
