#pragma once
// One validation path for every command-line option. A numeric option
// declares its accepted range where it is declared (range()); harden(),
// called once after every subcommand is declared, makes every option reject
// an empty value and every numeric one reject NaN, infinities, overflow,
// non-numbers and values outside its range, each as one line naming the
// option. describe() lists every option and technique parameter with its
// range, for `scaleproof list --json` and the hostile-input tests.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "scaleproof/option_range.hpp"

namespace sp::cli {

// A results folder name: one path component (check_folder_name).
CLI::Validator folder_name();
void harden(CLI::App& app);
nlohmann::json describe(CLI::App& app);

// Threads per rank: --threads if given, else OMP_NUM_THREADS, else the
// cores split over this node's ranks; InputError above what Kokkos's host
// back end supports.
int resolve_threads(int option_value, int local_ranks);

}  // namespace sp::cli
