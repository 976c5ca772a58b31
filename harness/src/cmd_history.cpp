// `scaleproof history`: the runs in the results database, filtered; with
// --case, one case's time over those runs, a plot of it, and the regression
// gate (the last run against the median of the previous runs on its machine;
// exit 1 on a regression).
#include <CLI/CLI.hpp>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>

#include "db/query.hpp"
#include "db/regression.hpp"
#include "plots.hpp"
#include "results.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/option_range.hpp"
#include "scaleproof/registry.hpp"

namespace fs = std::filesystem;

namespace sp {

namespace {

struct HistoryArgs {
  db::Options db;
  db::RunFilter f;
  std::string case_key, plot;
  int window = 5;
  double threshold = 0.10;
};

void check_date(const std::string& d, const char* option) {
  static const std::regex iso(R"(\d{4}-\d{2}-\d{2})");
  if (!d.empty() && !std::regex_match(d, iso))
    throw InputError(std::string(option) + " '" + d + "': expected YYYY-MM-DD");
}

// "technique/variant/params"; the parameters may be empty, never the other two.
void split_case(const std::string& key, std::string& t, std::string& v, std::string& p) {
  const size_t a = key.find('/'), b = a == std::string::npos ? a : key.find('/', a + 1);
  if (b == std::string::npos || a == 0 || b == a + 1)
    throw InputError("--case '" + key + "': expected technique/variant/params");
  t = key.substr(0, a), v = key.substr(a + 1, b - a - 1), p = key.substr(b + 1);
}

std::string describe(const db::RunFilter& f) {
  std::string s;
  auto add = [&](const char* k, const std::string& v) {
    if (!v.empty()) s += std::string(s.empty() ? "" : ", ") + k + " " + v;
  };
  add("technique", f.technique), add("variant", f.variant), add("params", f.params), add("machine", f.machine);
  add("commit", f.commit), add("kind", f.kind), add("since", f.since), add("until", f.until);
  return s.empty() ? "" : " (" + s + ")";
}

int list(db::Database& d, const HistoryArgs& a) {
  const auto runs = db::list_runs(d, a.f);
  if (runs.empty())
    throw InputError("no run in " + d.path() + " matches" +
                     (describe(a.f).empty() ? ": the database is empty" : describe(a.f)));
  std::printf("%5s  %-20s  %-10s  %-12s  %-12s  %5s  %6s  %s\n", "run", "date", "kind", "machine", "commit", "ranks",
              "cases", "name");
  for (auto& r : runs)
    std::printf("%5lld  %-20s  %-10s  %-12s  %-12s  %5d  %6d  %s\n", static_cast<long long>(r.id), r.date.c_str(),
                r.kind.c_str(), r.machine.c_str(), r.commit.substr(0, 12).c_str(), r.ranks, r.cases, r.name.c_str());
  std::printf("%zu run(s)\n", runs.size());
  return 0;
}

// Draws the trend with the project's plot helper into a private folder, then moves the PNG into place.
std::string draw(const nlohmann::json& h, const std::string& out) {
  std::string tmpl = (fs::temp_directory_path() / "sp-history-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return "plot not drawn: no temporary folder";
  {
    std::ofstream f(fs::path(tmpl) / "history.json");
    f << h.dump(1);
  }
  std::string note = draw_plots("history_plot.py", tmpl);
  std::error_code ec;
  if (note.empty()) {
    const std::string staged = out + ".tmp-" + std::to_string(getpid());
    fs::copy_file(fs::path(tmpl) / "history.png", staged, fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::rename(staged, out, ec);
    if (ec) note = "plot not written to " + out + ": " + ec.message();
  }
  fs::remove_all(tmpl, ec);
  return note;
}

int trend(db::Database& d, const HistoryArgs& a) {
  std::string t, v, p;
  split_case(a.case_key, t, v, p);
  const auto points = db::case_trend(d, t, v, p, a.f);
  if (points.empty()) throw InputError("no run in " + d.path() + " has a time for " + a.case_key + describe(a.f));
  const auto verdict = db::judge_trend(points, a.window, a.threshold);
  std::printf(
      "%s: per run, the median time per call over repetitions (min..max over repetitions, n of them); with the "
      "measurement service's statistics, the median call (median over repetitions) and fastest call..highest "
      "90th percentile\n",
      a.case_key.c_str());
  std::printf("%5s  %-20s  %-12s  %-12s  %12s  %23s  %3s  %12s  %23s\n", "run", "date", "machine", "commit",
              "median (s)", "min..max (s)", "n", "call med (s)", "call min..p90 (s)");
  nlohmann::json pts = nlohmann::json::array();
  for (auto& pt : points) {
    char range[64], call[32] = "-", call_range[64] = "-";
    std::snprintf(range, sizeof range, "%.4g..%.4g", pt.t.min, pt.t.max);
    if (pt.t.calls) {
      std::snprintf(call, sizeof call, "%.4g", pt.t.call_median);
      std::snprintf(call_range, sizeof call_range, "%.4g..%.4g", pt.t.call_min, pt.t.call_p90);
    }
    std::printf("%5lld  %-20s  %-12s  %-12s  %12.4g  %23s  %3d  %12s  %23s\n", static_cast<long long>(pt.run.id),
                pt.run.date.c_str(), pt.run.machine.c_str(), pt.run.commit.substr(0, 12).c_str(), pt.t.median, range,
                pt.t.n, call, call_range);
    nlohmann::json j = {
        {"run", pt.run.id},      {"date", pt.run.date}, {"commit", pt.run.commit}, {"machine", pt.run.machine},
        {"median", pt.t.median}, {"min", pt.t.min},     {"max", pt.t.max},         {"n", pt.t.n}};
    if (pt.t.calls) j["calls"] = {{"median", pt.t.call_median}, {"min", pt.t.call_min}, {"p90", pt.t.call_p90}};
    pts.push_back(j);
  }
  nlohmann::json h = {{"case", a.case_key},
                      {"machine", a.f.machine},
                      {"threshold", a.threshold},
                      {"points", pts},
                      {"reference", verdict.judged ? nlohmann::json(verdict.reference) : nlohmann::json()},
                      {"reference_of", verdict.calls ? "calls" : "repetitions"}};
  const std::string note = draw(h, a.plot);
  std::printf("%s\n", note.empty() ? ("plot: " + a.plot).c_str() : note.c_str());
  if (!verdict.judged) {
    std::printf("not judged: no earlier run of this case on %s\n", verdict.machine.c_str());
    return 0;
  }
  std::printf(
      "last run %.4g s vs the median of the %d previous run(s) on %s, %.4g s (%s): ratio %.3f; regression above "
      "%.3f: %s\n",
      verdict.last, verdict.previous, verdict.machine.c_str(), verdict.reference,
      verdict.calls ? "median calls" : "medians over repetitions", verdict.ratio, 1 + a.threshold,
      verdict.regression ? "REGRESSION" : "ok");
  return verdict.regression ? 1 : 0;
}

int run_history(HistoryArgs& a) {
  if (comm::size() > 1) throw InputError("run `scaleproof history` as one process");
  if (!a.db.enabled()) throw InputError("--db none: history needs a database");
  check_date(a.f.since, "--since");
  check_date(a.f.until, "--until");
  if (!a.f.since.empty() && !a.f.until.empty() && a.f.since > a.f.until)
    throw InputError("--since " + a.f.since + " is after --until " + a.f.until);
  const db::Options o = a.db.under("results");
  if (!a.case_key.empty()) {
    std::string t, v, p;
    split_case(a.case_key, t, v, p);
    if (a.plot.empty()) a.plot = (fs::path(o.path).parent_path() / ("history-" + t + "-" + v + ".png")).string();
    check_writable_file(a.plot, "--plot");
  }
  db::Database d(o, false);
  return a.case_key.empty() ? list(d, a) : trend(d, a);
}

Registry::Command hook(CLI::App& app) {
  auto a = std::make_shared<HistoryArgs>();
  auto* c = app.add_subcommand("history",
                               "Runs in the results database; with --case, one case's trend and the regression gate");
  db::add_options(c, a->db);
  c->add_option("--technique,-t", a->f.technique, "Only runs with this technique");
  c->add_option("--variant", a->f.variant, "Only runs with this variant");
  c->add_option("--params", a->f.params, "Only runs with this parameter set (its label, e.g. M=256,N=256,K=256)");
  c->add_option("--machine", a->f.machine, "Only runs on this machine (the manifest's host name)");
  c->add_option("--commit", a->f.commit, "Only runs of this commit (a prefix)");
  c->add_option("--kind", a->f.kind, "Only runs of this command: run, bench, scale, qualify, nccl-tests");
  c->add_option("--since", a->f.since, "Only runs on or after this date (YYYY-MM-DD)");
  c->add_option("--until", a->f.until, "Only runs on or before this date (YYYY-MM-DD)");
  c->add_option("--case", a->case_key, "One case, technique/variant/params: its trend, a plot and the regression gate");
  c->add_option("--plot", a->plot,
                "Where --case writes its plot (default: history-<technique>-<variant>.png beside the database)");
  cli::range(c->add_option("--window", a->window, "Previous runs on the same machine the last run is judged against"),
             1, 100000)
      ->capture_default_str();
  cli::positive(c->add_option("--threshold", a->threshold, "Relative slowdown of the last run counted as a regression"),
                1e6)
      ->capture_default_str();
  return {c, [a] { return run_history(*a); }};
}

SP_REGISTER_COMMAND(hook);

}  // namespace

}  // namespace sp
