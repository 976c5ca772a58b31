#pragma once
// Turns CLI filters (--family, --technique, --size, --set) into the list of
// cases to run, validating everything before anything is written.
#include <string>
#include <vector>

#include "scaleproof/registry.hpp"

namespace sp {

struct Filter {
  std::vector<std::string> families;    // empty = all
  std::vector<std::string> techniques;  // empty = all
  std::vector<Size> sizes;              // empty = caller's default
  std::vector<std::string> sets;        // KEY=VALUE overrides merged into each parameter set
  std::vector<std::string> variants;    // empty = all available
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
std::vector<Case> select_cases(const Filter& f, int nranks, std::vector<std::string>* skipped = nullptr);

// The node's physical memory (infinite if unknown).
double physical_memory_bytes();

// Turns "64K", "1M", "2G" into a number (nccl-tests' -b/-e convention).
long long parse_bytes(const std::string& s);

}  // namespace sp
