#pragma once
// Turns CLI filters (--family, --technique, --size, --set) into the list of
// cases to run, validating everything before anything is written.
#include <string>
#include <vector>

#include "scaleproof/host.hpp"
#include "scaleproof/registry.hpp"

namespace sp {

// Which techniques a selection may hold by their rank rule: the main job runs
// single-rank techniques in its own process and launches the multi-rank ones.
enum class RankScope { all, single_rank, multi_rank };

struct Filter {
  std::vector<std::string> families;    // empty = all
  std::vector<std::string> techniques;  // empty = all
  std::vector<Size> sizes;              // empty = caller's default
  std::vector<std::string> sets;        // KEY=VALUE overrides merged into each parameter set
  std::vector<std::string> variants;    // empty = all available
  RankScope scope = RankScope::all;     // other scopes skip the other kind silently
};

struct Case {
  const Registered* tech = nullptr;
  Size size = Size::conformance;
  Params params;
  std::vector<std::string> variants;  // those to run (available and selected)
};

// Throws InputError for an unknown family/technique/variant, a malformed or
// invalid parameter, or a rank count an explicitly selected technique cannot use.
// Techniques selected only through their family (or all) that cannot use the
// rank count are skipped, and their names returned in `skipped`.
// The techniques the filter's families, techniques and scope select, before
// rank rules, variants and sizes. Throws InputError for an unknown name.
std::vector<const Registered*> matching(const Filter& f);

// With a scope other than `all`, --set keys no selected technique knows are
// not an error here: the caller checks them over its scopes together.
std::vector<Case> select_cases(const Filter& f, int nranks, std::vector<std::string>* skipped = nullptr);

// A technique is multi-rank when its rank rule allows more than one rank.
inline bool multi_rank(const Info& info) { return info.ranks.max > 1; }

// Turns "64K", "1M", "2G" into a number (nccl-tests' -b/-e convention).
long long parse_bytes(const std::string& s);

}  // namespace sp
