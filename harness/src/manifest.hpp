#pragma once
// The provenance every results file carries: what ran, where, built how.
#include <nlohmann/json.hpp>
#include <string>

namespace sp {

struct RunContext {
  std::string command_line;
  int ranks = 1;
  int threads = 1;
};

nlohmann::json collect_manifest(const RunContext& ctx);
// Ranks x threads per node above the node's cores: timings are not meaningful.
bool oversubscribed(int local_ranks, int threads, int* cores_out = nullptr);
int local_ranks();  // ranks sharing this node
int local_rank();   // this rank's index among them

}  // namespace sp
