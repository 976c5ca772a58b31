// `scaleproof qualify --profile FILE`: runs the suite (a child `scaleproof
// run` under the watchdog) or reads an existing results folder (--results),
// judges each criterion of the machine profile, and writes
// qualification.json, qualification.md and junit.xml into a results folder.
// `scaleproof qualify --make-profile FILE` writes a profile whose references
// come from the results database (make_profile.hpp) and runs nothing.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli_checks.hpp"
#include "db/record.hpp"
#include "heartbeat.hpp"
#include "launch.hpp"
#include "make_profile.hpp"
#include "manifest.hpp"
#include "plots.hpp"
#include "qualify.hpp"
#include "report.hpp"
#include "results.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "scaleproof/registry.hpp"
#include "selection.hpp"

namespace fs = std::filesystem;

namespace sp {

namespace {

struct QualifyArgs {
  std::string profile, results, junit, out = "results", name, size = "small";
  std::vector<std::string> families, techniques, sets;  // passed to the suite run
  double min_time = 0.2, timeout_s = 3600;
  int repetitions = 3;
  db::Options db;
  QualifyOptions judge;  // --machine, --require-reference
  std::string make_profile;
  MakeProfileOptions make;
};

int run_make_profile(const QualifyArgs& o) {
  check_writable_file(o.make_profile, "--make-profile");
  if (!o.db.enabled()) throw InputError("--db none: --make-profile reads the results database");
  db::Database d(o.db.under(o.out), false);
  const auto profile = make_profile(d, o.make);
  write_file_atomic(o.make_profile, profile.dump(2) + "\n");
  size_t n = 0;
  for (auto& [m, list] : profile["references"].items()) n += list.size();
  std::printf("%s: %zu reference(s) for machine '%s'\n", o.make_profile.c_str(), n,
              profile["machine"].get<std::string>().c_str());
  return 0;
}

int run_qualify(const QualifyArgs& o) {
  if (comm::size() > 1) throw InputError("run `scaleproof qualify` as one process");
  if (!o.make_profile.empty()) return run_make_profile(o);
  if (o.profile.empty()) throw InputError("qualify needs --profile FILE (or --make-profile FILE)");
  const Profile profile = load_profile(o.profile);
  if (!o.junit.empty()) check_writable_file(o.junit, "--junit");
  if (!o.results.empty() && !fs::is_directory(o.results)) throw InputError("no results folder at " + o.results);
  if (o.results.empty()) {
    Filter f{o.families, o.techniques, {parse_size(o.size)}, o.sets, {}};
    select_cases(f, 1);  // an unknown technique or a bad --set is an input error before any folder exists
  }
  db::check_usable(o.db.under(o.out));
  ResultsDir dir(o.out, o.name);
  std::string source = o.results;
  std::string run_failure;
  if (source.empty()) {
    // The suite runs as a child so that a hang or crash ends in a report, not in a stuck CI job.
    const std::string hb = dir.path("run.heartbeat");
    std::printf("qualify: running the suite (scaleproof run --size %s), log %s\n", o.size.c_str(), "run.log");
    std::fflush(stdout);
    std::vector<std::string> argv = {self_exe(),   "run",
                                     "--size",     o.size,
                                     "--out",      dir.path(""),
                                     "--name",     "run",
                                     "--min-time", std::to_string(o.min_time),
                                     "-r",         std::to_string(o.repetitions),
                                     "--db",       "none"};  // recorded with the qualification, as one run
    for (auto& f : o.families) argv.insert(argv.end(), {"--family", f});
    for (auto& t : o.techniques) argv.insert(argv.end(), {"--technique", t});
    for (auto& s : o.sets) argv.insert(argv.end(), {"--set", s});
    auto r = run_with_watchdog(argv, {{"SP_HEARTBEAT_DIR", hb}}, dir.path("run.log"), o.timeout_s);
    source = dir.path("run");
    std::error_code ec;
    fs::remove(dir.path("latest"), ec);  // the child's ResultsDir link, meaningless inside this folder
    if (!fs::is_directory(source))
      run_failure = "the suite run failed: " + r.describe() + ": " + heartbeat::diagnose(hb, 1);
    else
      fs::remove_all(hb);
  }
  auto results = fs::is_directory(source) ? qualify(profile, source, o.judge) : std::vector<CriterionResult>{};
  if (!run_failure.empty()) {
    Criterion c{"suite run completed", "run"};
    results.insert(results.begin(), {c, CriterionStatus::fail, 0, run_failure});
  }
  auto j = to_json(profile, results);
  j["results"] = o.results.empty() ? "run" : fs::absolute(o.results).string();
  j["profile"] = fs::absolute(o.profile).string();
  dir.write_json("qualification.json", j);
  const std::string xml = junit_xml(profile, results);
  dir.write_text("junit.xml", xml);
  dir.write_text("qualification.md", qualification_markdown(profile, results));
  dir.write_json("manifest.json", collect_manifest({process_command_line(), 1, kx::concurrency()}));
  dir.write_text("report.md", render_report(dir.path(""), fs::path(dir.final_path()).filename()));
  write_html_report(dir.path(""));
  const std::string final_path = dir.commit();
  if (!o.junit.empty()) write_file_atomic(o.junit, xml);
  db::record_committed(o.db.under(o.out), final_path, "qualify");

  int failed = 0;
  for (auto& r : results) {
    std::printf("%-4s %-28s %s\n", to_string(r.status), r.c.name.c_str(), r.detail.c_str());
    failed += r.status == CriterionStatus::fail;
  }
  std::printf("%s: %d of %zu criteria failed\nresults: %s\n", profile.machine.c_str(), failed, results.size(),
              final_path.c_str());
  return failed ? 1 : 0;
}

Registry::Command hook(CLI::App& app) {
  auto o = std::make_shared<QualifyArgs>();
  auto* c = app.add_subcommand("qualify", "Judge a machine against a profile of thresholds; pass/fail and JUnit XML");
  auto* profile = c->add_option("--profile", o->profile, "Machine profile (JSON), e.g. docs/profiles/cpu-2core.json");
  c->add_option("--machine", o->judge.machine,
                "Judge against this machine's references (default: the run's host name)");
  c->add_flag("--require-reference", o->judge.require_reference,
              "A reference criterion with no reference for the machine fails (instead of SKIP)");
  auto* make = c->add_option("--make-profile", o->make_profile,
                             "Write a profile with references from the results database (--db) instead of judging")
                   ->excludes(profile);
  c->add_option("--from-machine", o->make.machines, "--make-profile: runs of these machines (default: this host)");
  c->add_option("--reference-name", o->make.name,
                "--make-profile: the machine name of the references (default: the one machine, else fleet)");
  cli::positive(c->add_option("--min-width", o->make.min_width,
                              "--make-profile: bounds at least [1 - w, 1 + w] of the reference"),
                10)
      ->capture_default_str();
  auto* results =
      c->add_option("--results", o->results, "Judge this existing `run` results folder instead of running the suite");
  c->add_option("--junit", o->junit, "Also write the JUnit XML to this file");
  c->add_option("--size,-s", o->size, "Parameter-set size of the suite run")->capture_default_str();
  c->add_option("--family,-F", o->families, "Suite run: only these families");
  c->add_option("--technique,-t", o->techniques, "Suite run: only these techniques");
  c->add_option("--set", o->sets, "Suite run: override parameters KEY=VALUE[,KEY=VALUE]");
  cli::range(c->add_option("--min-time", o->min_time, "Seconds per benchmark repetition"), 1e-6, 3600)
      ->capture_default_str();
  cli::range(c->add_option("--repetitions,-r", o->repetitions, "Benchmark repetitions"), 1, 1000)
      ->capture_default_str();
  cli::positive(c->add_option("--timeout", o->timeout_s, "Watchdog: seconds for the suite run"), 1e6)
      ->capture_default_str();
  c->add_option("--out,-o", o->out, "Parent folder for the results folder")->capture_default_str();
  c->add_option("--name", o->name, "Results folder name (default: UTC timestamp)")->check(cli::folder_name());
  db::add_options(c, o->db);
  // The suite run's options mean nothing when judging an existing folder.
  for (const char* suite_option :
       {"--size", "--family", "--technique", "--set", "--min-time", "--repetitions", "--timeout"})
    results->excludes(c->get_option(suite_option));
  for (const char* judging : {"--results", "--size", "--family", "--technique", "--set", "--min-time", "--repetitions",
                              "--timeout", "--junit", "--name", "--machine", "--require-reference"})
    make->excludes(c->get_option(judging));
  for (const char* making : {"--from-machine", "--reference-name", "--min-width"})
    profile->excludes(c->get_option(making));
  return {c, [o] { return run_qualify(*o); }};
}

SP_REGISTER_COMMAND(hook);

}  // namespace

}  // namespace sp
