#pragma once
// The accepted range of a numeric command-line option, declared where the
// option is declared. The CLI's one validation path (harness cli_checks)
// enforces it and lists it; subcommands of families declare theirs here too.
#include <CLI/CLI.hpp>

namespace sp::cli {

struct Bounds {
  double lo, hi;
  bool lo_open;  // lo itself excluded
};

// lo <= value <= hi (lo < value when lo_open). Returns opt, for chaining.
CLI::Option* range(CLI::Option* opt, double lo, double hi, bool lo_open = false);
CLI::Option* positive(CLI::Option* opt, double hi);  // 0 < value <= hi
const Bounds* bounds_of(const CLI::Option* opt);     // nullptr if none declared

}  // namespace sp::cli
