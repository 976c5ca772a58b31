// `scaleproof compare A B`: the regression gate between two results folders,
// or runs of the results database named by their id (`scaleproof history`
// lists them). Exit 1 when a case is slower than A by more than the threshold.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "db/query.hpp"
#include "results.hpp"
#include "results_compare.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/option_range.hpp"
#include "scaleproof/registry.hpp"

namespace sp {

namespace {

struct CompareArgs {
  std::string a, b, json_out;
  double threshold = 0.10;
  db::Options db;
};

// A results folder, else (all digits, no such folder) a run id of the database.
std::map<std::string, double> timings_of(const std::string& arg, const db::Options& o) {
  std::error_code ec;
  const bool id = !arg.empty() && arg.size() < 19 && arg.find_first_not_of("0123456789") == std::string::npos;
  if (!id || std::filesystem::exists(arg, ec)) return read_timings(arg);
  if (!o.enabled()) throw InputError("compare " + arg + ": no such folder, and --db none names no database");
  db::Database d(o.under("results"), false);
  std::map<std::string, double> t;
  for (auto& [k, v] : db::run_timings(d, std::stoll(arg))) t[k] = v.median;
  if (t.empty()) throw InputError("run " + arg + " of " + d.path() + " holds no timings");
  return t;
}

int run_compare(const CompareArgs& o) {
  if (!o.json_out.empty()) check_writable_file(o.json_out, "--json");
  const auto rows = compare_timings(timings_of(o.a, o.db), timings_of(o.b, o.db), o.threshold);
  bool common = false;
  for (auto& r : rows)
    common = common || (r.status != CompareStatus::only_in_a && r.status != CompareStatus::only_in_b);
  if (!common) throw InputError("nothing to compare: no technique and parameter set is in both folders");
  if (comm::rank() != 0) return 0;
  std::printf("A: %s\nB: %s\nratio = time B / time A; regression above %.3g\n\n", o.a.c_str(), o.b.c_str(),
              1 + o.threshold);
  std::printf("%-72s %12s %12s %8s  %s\n", "technique/variant/params", "A (s)", "B (s)", "B/A", "status");
  int regressions = 0;
  nlohmann::json j = nlohmann::json::array();
  for (auto& r : rows) {
    std::printf("%-72s %12.4g %12.4g %8.3f  %s\n", r.key.c_str(), r.a, r.b, r.ratio, to_string(r.status));
    regressions += r.status == CompareStatus::regression;
    j.push_back({{"key", r.key}, {"a_s", r.a}, {"b_s", r.b}, {"ratio", r.ratio}, {"status", to_string(r.status)}});
  }
  if (regressions) {
    std::printf("\n%d regression(s) beyond %.0f%%:\n", regressions, 100 * o.threshold);
    for (auto& r : rows)
      if (r.status == CompareStatus::regression) std::printf("  %s: %.3fx slower\n", r.key.c_str(), r.ratio);
  } else {
    std::printf("\nno regression beyond %.0f%%\n", 100 * o.threshold);
  }
  if (!o.json_out.empty())
    write_file_atomic(o.json_out,
                      nlohmann::json{{"a", o.a}, {"b", o.b}, {"threshold", o.threshold}, {"rows", j}}.dump(2) + "\n");
  return regressions ? 1 : 0;
}

Registry::Command hook(CLI::App& app) {
  auto o = std::make_shared<CompareArgs>();
  auto* c = app.add_subcommand("compare", "Time ratios between two results folders; regressions make the exit code 1");
  c->add_option("a", o->a, "Baseline results folder, or run id in the database")->required();
  c->add_option("b", o->b, "New results folder, or run id in the database")->required();
  db::add_options(c, o->db);
  cli::positive(c->add_option("--threshold", o->threshold, "Relative slowdown counted as a regression"), 1e6)
      ->capture_default_str();
  c->add_option("--json", o->json_out, "Also write the comparison as JSON to this file");
  return {c, [o] { return run_compare(*o); }};
}

SP_REGISTER_COMMAND(hook);

}  // namespace

}  // namespace sp
