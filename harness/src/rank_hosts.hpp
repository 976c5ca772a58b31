#pragma once
// The host name of every rank, in rank order (collective: every rank calls
// it, every rank gets the list). Names a straggler's node.
#include <string>
#include <vector>

namespace sp {

std::vector<std::string> rank_hosts();

}  // namespace sp
