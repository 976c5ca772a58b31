#include "run_job.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>

#include "checker.hpp"
#include "db/record.hpp"
#include "main_job.hpp"
#include "models.hpp"
#include "plots.hpp"
#include "report.hpp"
#include "results.hpp"
#include "runner.hpp"
#include "scaleproof/comm.hpp"
#include "rank_hosts.hpp"
#include "stragglers.hpp"
#include "summary.hpp"
#include "watchdog.hpp"

namespace fs = std::filesystem;

namespace sp {

Filter make_filter(const RunOptions& o, Size default_size) {
  Filter f{o.families, o.techniques, {}, o.sets, o.variants};
  for (auto& s : o.sizes) f.sizes.push_back(parse_size(s));
  if (f.sizes.empty()) f.sizes.push_back(default_size);
  return f;
}

namespace {

// Roof probes join every run that needs verdicts, at the run's size.
void add_roof_probes(std::vector<Case>& cases, const Filter& f, int nranks) {
  for (auto& r : Registry::get().all()) {
    if (r.info.roof_probe.empty() || !r.info.ranks.accepts(nranks)) continue;
    bool present = false;
    for (auto& c : cases) present = present || c.tech == &r;
    if (present) continue;
    Filter probe;
    probe.techniques = {r.info.name};
    probe.sizes = f.sizes;
    try {
      auto extra = select_cases(probe, nranks);
      cases.insert(cases.begin(), extra.begin(), extra.end());
    } catch (const InputError&) {
      // the probe has no parameter set of this size
    }
  }
}

// select_cases(), except that a scope holding no technique selects nothing
// rather than being an error: the main job splits one selection in two.
std::vector<Case> select_in_scope(const Filter& f, int nranks, std::vector<std::string>* skipped) {
  if (matching(f).empty()) return {};
  return select_cases(f, nranks, skipped);
}

// --set keys are checked over every technique the filters name, whichever
// part of the main job runs it or skips it: a key only one part knows is not
// a typo.
void check_overrides(const Filter& f) {
  Filter all = f;
  all.scope = RankScope::all;
  const auto techs = matching(all);
  for (auto& s : f.sets) {
    const Params one = Params::parse(s);
    for (auto& [k, v] : one.items()) {
      bool used = false;
      for (auto* r : techs) used = used || r->info.param_sets.front().params.has(k);
      if (!used) throw InputError("no selected technique has a parameter '" + k + "'");
    }
  }
}

std::map<std::string, std::string> context_of(const nlohmann::json& manifest) {
  std::map<std::string, std::string> ctx;
  for (auto& [k, v] : manifest.items()) ctx["sp_" + k] = v.is_string() ? v.get<std::string>() : v.dump();
  return ctx;
}

void warn_oversubscribed(const nlohmann::json& manifest, const RunContext& rc) {
  if (comm::rank() == 0 && manifest.value("oversubscribed", false))
    std::printf("warning: oversubscribed: %d rank(s) x %d thread(s) on %d core(s); timings are not meaningful\n",
                manifest["ranks_per_node"].get<int>(), rc.threads, manifest["cores"].get<int>());
}

BenchOptions bench_options(const RunOptions& o, const std::string& json_out, const nlohmann::json& manifest) {
  BenchOptions bo;
  bo.min_time = o.min_time;
  bo.repetitions = o.repetitions;
  bo.json_out = json_out;
  bo.context = context_of(manifest);
  bo.progress = true;
  return bo;
}

// What a watchdog that fires keeps: the results written so far, marked partial.
std::string keep_partial(ResultsDir* dir, const nlohmann::json& manifest, const std::string& why) {
  if (!dir) return "";
  dir->write_json("manifest.json", manifest);
  dir->write_text("PARTIAL", why + "\n");
  return dir->commit();
}

// ranks.md and ranks.json, which the two reports include: per-rank times of the multi-rank cases.
void write_ranks_section(const ResultsDir& dir) {
  const auto rows = rank_spreads_of(dir.path(""));
  if (rows.empty()) return;
  dir.write_text("ranks.md", ranks_markdown(rows));
  dir.write_json("ranks.json", ranks_json(rows));
}

int failed_checks(const nlohmann::json& rows) {
  int n = 0;
  for (auto& r : rows) n += !r.value("passed", false);
  return n;
}

}  // namespace

void print_skipped(const std::vector<std::string>& skipped, int nranks) {
  if (skipped.empty() || comm::rank() != 0) return;
  std::printf("note: %zu technique(s) skipped: they cannot use %d rank(s):", skipped.size(), nranks);
  for (auto& s : skipped) std::printf(" %s", s.c_str());
  std::printf("\n");
}

int cmd_bench(const RunOptions& o, const RunContext& rc) {
  const int nranks = comm::size();
  std::vector<std::string> skipped;
  auto cases = select_cases(make_filter(o, kDefaultRunSize), nranks, &skipped);
  print_skipped(skipped, nranks);
  db::check_usable_on_ranks(o.db.under(o.out));
  auto manifest = collect_manifest(rc);
  manifest["rank_hosts"] = rank_hosts();
  warn_oversubscribed(manifest, rc);
  // Only rank 0 writes; the folder appears only when complete.
  std::unique_ptr<ResultsDir> dir;
  if (comm::rank() == 0) dir = std::make_unique<ResultsDir>(o.out, o.name);
  watchdog::KeepPartial keep([&](const std::string& why) { return keep_partial(dir.get(), manifest, why); });
  run_benchmarks(cases, bench_options(o, dir ? dir->path("bench.json") : "", manifest));
  if (!dir) return 0;
  dir->write_json("manifest.json", manifest);
  write_ranks_section(*dir);
  dir->write_text("report.md", render_report(dir->path(""), fs::path(dir->final_path()).filename()));
  write_html_report(dir->path(""));
  const std::string final_path = dir->commit();
  std::printf("results: %s\n", final_path.c_str());
  db::record_committed(o.db.under(o.out), final_path, "bench");
  return 0;
}

int cmd_run(const RunOptions& o, const RunContext& rc) {
  const int nranks = comm::size();
  const bool main_job = !o.part && nranks == 1 && !under_launcher();
  if (!std::isfinite(o.timeout_s)) throw InputError("--timeout must be a finite number of seconds");
  if (!main_job && (o.ranks > 0 || !o.launcher.empty() || o.one_rank))
    throw InputError(
        "--ranks, --launcher and --one-rank apply only to `scaleproof run` started outside an MPI launcher");
  if (o.one_rank && (o.ranks > 0 || !o.launcher.empty()))
    throw InputError("--one-rank launches nothing: it takes neither --ranks nor --launcher");
  const Filter f = make_filter(o, kDefaultRunSize);
  const int cores = static_cast<int>(std::thread::hardware_concurrency());

  // This process runs every selected technique when a launcher started it
  // with several ranks; at one rank only the single-rank ones (a multi-rank
  // technique is not measured at p = 1 unless asked: `--one-rank` runs it
  // here, at one rank, where its step is its arithmetic alone); a launched
  // part the multi-rank ones. (--one-rank was refused above unless this is
  // the main job.)
  const bool all_at_one_rank = o.one_rank;
  Filter here = f;
  here.scope = o.part                            ? RankScope::multi_rank
               : nranks == 1 && !all_at_one_rank ? RankScope::single_rank
                                                 : RankScope::all;
  nlohmann::json skipped = nlohmann::json::array();
  LaunchPlan plan;
  if (main_job && !all_at_one_rank) {
    plan = plan_launch(o, f, cores);
    skipped = plan.skipped;
  } else if (nranks == 1 && !o.part && !all_at_one_rank) {
    Filter multi = f;
    multi.scope = RankScope::multi_rank;
    for (auto* r : matching(multi))
      skipped.push_back({{"technique", r->info.name}, {"reason", "needs >= 2 ranks; this run has 1 rank"}});
  }
  std::vector<std::string> rejected;
  auto cases = select_in_scope(here, nranks, &rejected);
  print_skipped(rejected, nranks);
  if (!o.part) check_overrides(f);
  if (cases.empty() && plan.cases.empty())
    throw InputError("nothing selected: no technique can run at these rank counts");
  if (!o.part) add_roof_probes(cases, f, nranks);
  Filter cf = here;
  cf.sizes = {Size::conformance};
  cf.sets.clear();
  const auto check_list = select_in_scope(cf, nranks, nullptr);

  if (!o.part) db::check_usable_on_ranks(o.db.under(o.out));
  auto manifest = collect_manifest(rc);
  manifest["rank_hosts"] = rank_hosts();
  warn_oversubscribed(manifest, rc);
  std::unique_ptr<ResultsDir> dir;
  if (comm::rank() == 0) dir = std::make_unique<ResultsDir>(o.out, o.name);
  watchdog::KeepPartial keep([&](const std::string& why) { return keep_partial(dir.get(), manifest, why); });
  auto check_rows = to_json(check_cases(check_list, true));
  nlohmann::json bench = {{"context", context_of(manifest)}, {"benchmarks", nlohmann::json::array()}};
  if (!cases.empty()) run_benchmarks(cases, bench_options(o, dir ? dir->path("bench.json") : "", manifest));
  if (!dir) return 0;
  if (!cases.empty()) bench = read_json(dir->path("bench.json"));

  int code = 0;
  nlohmann::json job = {{"launches", nlohmann::json::array()}, {"skipped", skipped}};
  if (plan.ranks > 0) {
    // The launch has a watchdog of its own, and this process only waits for
    // it: its own watchdog, which sees no progress here, stops first.
    watchdog::stop();
    auto launch = run_launch(plan, o, dir->path(""), check_rows, bench);
    code |= launch["status"] != "ok";
    job["launches"].push_back(launch);
  }
  code |= failed_checks(check_rows) > 0;
  dir->write_json("manifest.json", manifest);
  dir->write_json("check.json", check_rows);
  dir->write_json("bench.json", bench);
  if (o.part) {
    std::printf("results: %s\n", dir->commit().c_str());
    return code;
  }
  dir->write_json("job.json", job);
  auto measured = read_measurements(bench);
  Machine machine = derive_machine(measured);
  auto verdicts = judge(measured, machine, not_at_best(manifest));
  dir->write_json("machine.json", to_json(machine));
  dir->write_json("verdicts.json", to_json(verdicts));
  const std::string note = draw_plots("roofline_plot.py", dir->path(""));
  if (!note.empty()) dir->write_text("plots.md", "_" + note + "_\n");
  for (auto& v : verdicts) code |= (o.strict && v.status == Status::fail) ? 1 : 0;
  write_ranks_section(*dir);
  const std::string report = render_report(dir->path(""), fs::path(dir->final_path()).filename());
  dir->write_text("report.md", report);
  write_html_report(dir->path(""));
  const std::string final_path = dir->commit();
  std::fputs(render_summary(final_path).c_str(), stdout);
  std::printf("results: %s (report.md)\n", final_path.c_str());
  db::record_committed(o.db.under(o.out), final_path, "run");
  return code;
}

}  // namespace sp
