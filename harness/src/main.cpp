// scaleproof: the command-line entry point. Parses options (CLI11), validates
// the selection before anything is written, then hands over to the checker,
// runner, models and report. Families add subcommands through the registry.
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>
#ifdef SP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "checker.hpp"
#include "heartbeat.hpp"
#include "manifest.hpp"
#include "models.hpp"
#include "plots.hpp"
#include "report.hpp"
#include "results.hpp"
#include "runner.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "selection.hpp"

namespace fs = std::filesystem;
using namespace sp;

namespace {

struct Options {
  std::vector<std::string> families, techniques, variants, sets, sizes;
  std::string out = "results";
  std::string name;
  int threads = 0;
  double min_time = 0.2;
  int repetitions = 3;
  bool strict = false;
};

void add_filters(CLI::App* c, Options& o) {
  c->add_option("--family,-F", o.families, "Only these families");
  c->add_option("--technique,-t", o.techniques, "Only these techniques");
  c->add_option("--variant", o.variants, "Only these variants (e.g. kokkos, openblas)");
  c->add_option("--size,-s", o.sizes, "Parameter-set sizes: conformance, small, medium, large");
  c->add_option("--set", o.sets, "Override parameters: KEY=VALUE[,KEY=VALUE]");
}

void add_run_options(CLI::App* c, Options& o) {
  c->add_option("--out,-o", o.out, "Parent folder for the results folder")->capture_default_str();
  c->add_option("--name", o.name, "Results folder name (default: UTC timestamp)");
  c->add_option("--min-time", o.min_time, "Seconds per benchmark repetition")->check(CLI::PositiveNumber);
  c->add_option("--repetitions,-r", o.repetitions, "Benchmark repetitions")->check(CLI::Range(1, 1000));
}

Filter make_filter(const Options& o, Size default_size) {
  Filter f{o.families, o.techniques, {}, o.sets, o.variants};
  for (auto& s : o.sizes) f.sizes.push_back(parse_size(s));
  if (f.sizes.empty()) f.sizes.push_back(default_size);
  return f;
}

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

void print_skipped(const std::vector<std::string>& skipped, int nranks) {
  if (skipped.empty() || comm::rank() != 0) return;
  std::printf("note: %zu technique(s) skipped: they cannot use %d rank(s):", skipped.size(), nranks);
  for (auto& s : skipped) std::printf(" %s", s.c_str());
  std::printf("\n");
}

int cmd_list(const Options& o) {
  Filter f{o.families, o.techniques, {}, {}, {}};
  auto& reg = Registry::get();
  const auto families = reg.families();  // one vector: begin() and end() of two temporaries would not pair
  for (auto& fam : f.families)
    if (!std::count(families.begin(), families.end(), fam)) throw InputError("unknown family '" + fam + "'");
  for (auto& t : f.techniques)
    if (!reg.find(t)) throw InputError("unknown technique '" + t + "'");
  if (comm::rank() != 0) return 0;
  std::string fam;
  for (auto& r : reg.all()) {
    if (!f.families.empty() && !std::count(f.families.begin(), f.families.end(), r.info.family)) continue;
    if (!f.techniques.empty() && !std::count(f.techniques.begin(), f.techniques.end(), r.info.name)) continue;
    if (r.info.family != fam) std::printf("%s%s\n", fam.empty() ? "" : "\n", (fam = r.info.family).c_str());
    std::string variants;
    for (auto& v : r.info.variants) variants += (variants.empty() ? "" : ",") + v;
    std::printf("  %-24s ranks %-14s variants %-22s %s\n", r.info.name.c_str(), r.info.ranks.describe().c_str(),
                variants.c_str(), r.info.summary.c_str());
    for (auto& ps : r.info.param_sets) std::printf("      %-12s %s\n", to_string(ps.size), ps.params.label().c_str());
  }
  return 0;
}

int cmd_check(const Options& o) {
  std::vector<std::string> skipped;
  auto cases = select_cases(make_filter(o, Size::conformance), comm::size(), &skipped);
  print_skipped(skipped, comm::size());
  auto rows = check_cases(cases, false);
  if (comm::rank() == 0) std::fputs(check_table(rows).c_str(), stdout);
  for (auto& r : rows)
    if (!r.passed()) return 1;
  return 0;
}

std::map<std::string, std::string> context_of(const nlohmann::json& manifest) {
  std::map<std::string, std::string> ctx;
  for (auto& [k, v] : manifest.items()) ctx["sp_" + k] = v.is_string() ? v.get<std::string>() : v.dump();
  return ctx;
}

// bench and run share everything except the check stage and verdicts.
int cmd_bench_or_run(const Options& o, bool full, const RunContext& rc) {
  const int nranks = comm::size();
  std::vector<std::string> skipped;
  Filter f = make_filter(o, full ? Size::medium : Size::small);
  auto cases = select_cases(f, nranks, &skipped);
  std::vector<Case> check_list;
  if (full) {
    add_roof_probes(cases, f, nranks);
    Filter cf = f;
    cf.sizes = {Size::conformance};
    cf.sets.clear();
    check_list = select_cases(cf, nranks);
  }
  print_skipped(skipped, nranks);
  auto manifest = collect_manifest(rc);
  if (comm::rank() == 0 && manifest.value("oversubscribed", false))
    std::printf("warning: oversubscribed: %d rank(s) x %d thread(s) on %d core(s); timings are not meaningful\n",
                manifest["ranks_per_node"].get<int>(), rc.threads, manifest["cores"].get<int>());

  // Only rank 0 writes; the folder appears only when complete.
  std::unique_ptr<ResultsDir> dir;
  if (comm::rank() == 0) dir = std::make_unique<ResultsDir>(o.out, o.name);
  int rc_code = 0;
  if (full) {
    auto rows = check_cases(check_list, true);
    for (auto& r : rows) rc_code |= !r.passed();
    if (dir) dir->write_json("check.json", to_json(rows));
    if (dir) std::fputs(check_table(rows).c_str(), stdout);
  }
  BenchOptions bo;
  bo.min_time = o.min_time;
  bo.repetitions = o.repetitions;
  bo.json_out = dir ? dir->path("bench.json") : "";
  bo.context = context_of(manifest);
  run_benchmarks(cases, bo);
  if (dir) {
    dir->write_json("manifest.json", manifest);
    auto measured = read_measurements(read_json(dir->path("bench.json")));
    if (full) {
      Machine machine = derive_machine(measured);
      auto verdicts = judge(measured, machine);
      dir->write_json("machine.json", to_json(machine));
      dir->write_json("verdicts.json", to_json(verdicts));
      const std::string note = draw_plots("roofline_plot.py", dir->path(""));
      if (!note.empty()) dir->write_text("plots.md", "_" + note + "_\n");
      for (auto& v : verdicts) rc_code |= (o.strict && v.status == "FAIL") ? 1 : 0;
    }
    std::string report = render_report(dir->path(""), fs::path(dir->final_path()).filename());
    dir->write_text("report.md", report);
    std::string final_path = dir->commit();
    if (full) {
      // The verdict table at the end of the console output, as in the report.
      auto pos = report.find("## Predictions and verdicts");
      if (pos != std::string::npos) std::fputs(report.substr(pos).c_str(), stdout);
    }
    std::printf("results: %s\n", final_path.c_str());
  }
  return rc_code;
}

int cmd_report(const std::string& dir, const std::string& out) {
  if (comm::rank() != 0) return 0;
  std::string md = render_report(dir);
  if (out.empty()) std::fputs(md.c_str(), stdout);
  else write_file_atomic(out, md);
  return 0;
}

std::string join_argv(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  comm::init(&argc, &argv);
  const std::string command_line = join_argv(argc, argv);
  CLI::App app{"ScaleProof: conformance and benchmarks for AI-training compute and communication techniques"};
  app.require_subcommand(1);
  Options o;
  app.add_option("--threads", o.threads, "Threads per rank (default: OMP_NUM_THREADS, else cores / ranks per node)")
      ->check(CLI::PositiveNumber);
  auto* list = app.add_subcommand("list", "List families, techniques, variants and parameter sets");
  list->add_option("--family,-F", o.families, "Only these families");
  list->add_option("--technique,-t", o.techniques, "Only these techniques");
  auto* check = app.add_subcommand("check", "Conformance: kernels vs references (PASSED/FAILED table)");
  add_filters(check, o);
  auto* bench = app.add_subcommand("bench", "Benchmarks (Google Benchmark JSON) into a results folder");
  add_filters(bench, o);
  add_run_options(bench, o);
  auto* run = app.add_subcommand("run", "The main job: check + bench + roofline + verdicts + report");
  add_filters(run, o);
  add_run_options(run, o);
  run->add_flag("--strict", o.strict, "Exit non-zero when a verdict fails");
  std::string report_dir, report_out;
  auto* report = app.add_subcommand("report", "Render a results folder as Markdown");
  report->add_option("dir", report_dir, "Results folder")->required();
  report->add_option("--out,-o", report_out, "Write to this file instead of stdout");
  std::vector<Registry::Command> family_commands;
  for (auto& hook : Registry::get().commands()) family_commands.push_back(hook(app));

  int code = 0;
  bool kokkos_up = false;
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      code = app.exit(e);
      comm::finalize();
      return code;
    } catch (const CLI::CallForAllHelp& e) {
      code = app.exit(e);
      comm::finalize();
      return code;
    } catch (const CLI::ParseError& e) {
      throw InputError(e.what());
    }
    // Threads: an explicit --threads wins, then OMP_NUM_THREADS, else split the cores over this node's ranks.
    int threads = o.threads;
    if (threads == 0 && std::getenv("OMP_NUM_THREADS")) threads = std::atoi(std::getenv("OMP_NUM_THREADS"));
    if (threads <= 0)
      threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, local_ranks()));
    // libgomp read OMP_PROC_BIND at start-up, when unset it binds nothing;
    // saying so explicitly only silences Kokkos 3.4's advisory warning.
    setenv("OMP_PROC_BIND", "false", 0);
    std::string kokkos_threads = "--kokkos-threads=" + std::to_string(threads);
    std::vector<char*> kargs = {argv[0], kokkos_threads.data()};
#ifdef SP_HAVE_CUDA
    // One GPU per rank of a node, round robin. Kokkos 3.4 maps ranks to
    // devices only from Open MPI's, MVAPICH2's or Slurm's local-rank
    // variables (not MPICH's), so the device is named here.
    std::string kokkos_device;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 1) {
      kokkos_device = "--kokkos-device-id=" + std::to_string(local_rank() % devices);
      kargs.push_back(kokkos_device.data());
    }
#endif
    int kargc = static_cast<int>(kargs.size());
    Kokkos::initialize(kargc, kargs.data());
    kokkos_up = true;
    heartbeat::start();  // for the watchdog of a parent `scale`/`qualify` (SP_HEARTBEAT_DIR)
    RunContext rc{command_line, comm::size(), kx::concurrency()};
    if (*list) code = cmd_list(o);
    else if (*check) code = cmd_check(o);
    else if (*bench) code = cmd_bench_or_run(o, false, rc);
    else if (*run) code = cmd_bench_or_run(o, true, rc);
    else if (*report) code = cmd_report(report_dir, report_out);
    else
      for (auto& fc : family_commands)
        if (fc.sub->parsed()) code = fc.run();
  } catch (const InputError& e) {
    if (comm::rank() == 0) std::fprintf(stderr, "scaleproof: error: %s\n", e.what());
    code = 2;
  } catch (const std::exception& e) {
    if (comm::rank() == 0) std::fprintf(stderr, "scaleproof: failed: %s\n", e.what());
    code = 3;
  }
  if (kokkos_up) Kokkos::finalize();
  comm::finalize();
  return code;
}
