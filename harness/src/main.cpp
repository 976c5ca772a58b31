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
#include "cli_checks.hpp"
#include "heartbeat.hpp"
#include "host_heap.hpp"
#include "launch.hpp"
#include "manifest.hpp"
#include "models.hpp"
#include "plots.hpp"
#include "report.hpp"
#include "results.hpp"
#include "runner.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "run_job.hpp"
#include "selection.hpp"
#include "vendor_env.hpp"
#include "watchdog.hpp"

namespace fs = std::filesystem;
using namespace sp;

namespace {

// The subcommands' options: the run options, and the process-wide ones.
struct Options : RunOptions {
  int threads = 0;
  bool json = false;
};

void add_filters(CLI::App* c, Options& o) {
  c->add_option("--family,-F", o.families, "Only these families");
  c->add_option("--technique,-t", o.techniques, "Only these techniques");
  c->add_option("--variant", o.variants, "Only these variants (e.g. kokkos, openblas)");
  c->add_option("--size,-s", o.sizes, "Parameter-set sizes: conformance, small, medium, large");
  c->add_option("--set", o.sets, "Override parameters: KEY=VALUE[,KEY=VALUE]");
  watchdog::add_option(c);
}

void add_run_options(CLI::App* c, Options& o) {
  c->add_option("--out,-o", o.out, "Parent folder for the results folder")->capture_default_str();
  c->add_option("--name", o.name, "Results folder name (default: UTC timestamp)")->check(cli::folder_name());
  cli::range(c->add_option("--min-time", o.min_time, "Seconds per benchmark repetition"), 1e-6, 3600);
  cli::range(c->add_option("--repetitions,-r", o.repetitions, "Benchmark repetitions"), 1, 1000);
  db::add_options(c, o.db);
}

int cmd_list(const Options& o, CLI::App& app) {
  Filter f{o.families, o.techniques, {}, {}, {}};
  auto& reg = Registry::get();
  const auto families = reg.families();  // one vector: begin() and end() of two temporaries would not pair
  for (auto& fam : f.families)
    if (!std::count(families.begin(), families.end(), fam)) throw InputError("unknown family '" + fam + "'");
  for (auto& t : f.techniques)
    if (!reg.find(t)) throw InputError("unknown technique '" + t + "'");
  if (comm::rank() != 0) return 0;
  if (o.json) return std::puts(cli::describe(app).dump(1).c_str()), 0;
  std::string fam;
  for (auto& r : reg.all()) {
    if (!f.families.empty() && !std::count(f.families.begin(), f.families.end(), r.info.family)) continue;
    if (!f.techniques.empty() && !std::count(f.techniques.begin(), f.techniques.end(), r.info.name)) continue;
    if (r.info.family != fam) std::printf("%s%s\n", fam.empty() ? "" : "\n", (fam = r.info.family).c_str());
    std::string variants;
    for (auto& v : r.info.variants) variants += (variants.empty() ? "" : ",") + v.name;
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

int cmd_report(const std::string& dir, const std::string& out) {
  require_results_folder(dir);
  if (!out.empty()) check_writable_file(out, "--out");
  if (comm::rank() != 0) return 0;
  std::string md = render_report(dir);
  if (out.empty())
    std::fputs(md.c_str(), stdout);
  else
    write_file_atomic(out, md);
  return 0;
}

std::string join_argv(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  restart_with_vendor_environment(argv);  // may start this process again: before anything else starts
  keep_freed_host_memory();               // before MPI, Kokkos or any technique allocates
  // Every rank of a launched job starts MPI here. A process no launcher
  // started is rank 0 of 1 and starts MPI at its first use of the world
  // communicator (comm.hpp): a command that never communicates (bad input,
  // list, report, a self-launching run's parent) does not pay for it.
  if (under_launcher()) comm::init(&argc, &argv);
  const std::string command_line = join_argv(argc, argv);
  CLI::App app{"ScaleProof: conformance and benchmarks for AI-training compute and communication techniques"};
  app.require_subcommand(1);
  Options o;
  cli::range(app.add_option("--threads", o.threads,
                            "Threads per rank (default: OMP_NUM_THREADS, else cores / ranks per node)"),
             1, kx::max_host_threads());
  auto* list = app.add_subcommand("list", "List families, techniques, variants and parameter sets");
  list->add_option("--family,-F", o.families, "Only these families");
  list->add_option("--technique,-t", o.techniques, "Only these techniques");
  list->add_flag("--json", o.json, "Every option and technique parameter with its accepted range, as JSON")->group("");
  auto* check = app.add_subcommand("check", "Conformance: kernels vs references (PASSED/FAILED table)");
  add_filters(check, o);
  auto* bench = app.add_subcommand("bench", "Benchmarks (Google Benchmark JSON) into a results folder");
  add_filters(bench, o);
  add_run_options(bench, o);
  auto* run = app.add_subcommand("run", "The main job: check + bench + roofline + verdicts + report");
  add_filters(run, o);
  add_run_options(run, o);
  run->add_flag("--strict", o.strict, "Exit non-zero when a verdict fails");
  run->add_flag("--one-rank", o.one_rank,
                "Run the multi-rank techniques in this process at one rank, where a step is its arithmetic alone (the "
                "fraction-of-GEMM-rate verdicts are judged there); no launch");
  run->add_option("--ranks", o.ranks,
                  "Ranks for the multi-rank techniques, launched by this run (default: the largest power of two <= "
                  "cores, >= 2)")
      ->check(CLI::Range(1, 1 << 20));
  run->add_option(
      "--launcher", o.launcher,
      "Launcher command with {n} for the rank count (default: mpiexec -n {n}, srun --mpi=pmi2 -n {n} inside Slurm)");
  run->add_flag("--part", o.part, "Internal: this process is the launched multi-rank part of a main job")->group("");
  std::string report_dir, report_out;
  auto* report = app.add_subcommand("report", "Render a results folder as Markdown");
  report->add_option("dir", report_dir, "Results folder")->required();
  report->add_option("--out,-o", report_out, "Write to this file instead of stdout");
  std::vector<Registry::Command> family_commands;
  for (auto& hook : Registry::get().commands()) family_commands.push_back(hook(app));
  for (auto& fc : family_commands)
    if (fc.on_ranks) watchdog::add_option(fc.sub);
  cli::harden(app);  // after every option exists: it enforces each declared range

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
    // A launcher that does not speak this MPI's process-management interface
    // starts N jobs of one rank each: their results would be N copies of p = 1.
    if (const int started = launcher_tasks(); started > 1 && comm::size() == 1)
      throw InputError("the launcher started " + std::to_string(started) +
                       " processes but MPI sees 1 rank in each: launcher and MPI do not share a process manager "
                       "(under Slurm: srun --mpi=pmi2)");
    // Threads: an explicit --threads wins, then OMP_NUM_THREADS, else split the cores over this node's ranks.
    const int threads = cli::resolve_threads(o.threads, local_ranks());
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
    // run's --timeout (the watchdog's) also bounds what a main job launches.
    if (run->parsed() && run->count("--timeout")) o.timeout_s = run->get_option("--timeout")->as<double>();
    watchdog::start(app);  // heartbeats, and the watchdog of commands that run techniques on ranks
    RunContext rc{command_line, comm::size(), kx::concurrency()};
    if (*list)
      code = cmd_list(o, app);
    else if (*check)
      code = cmd_check(o);
    else if (*bench)
      code = cmd_bench(o, rc);
    else if (*run)
      code = cmd_run(o, rc);
    else if (*report)
      code = cmd_report(report_dir, report_out);
    else
      for (auto& fc : family_commands)
        if (fc.sub->parsed()) code = fc.run();
  } catch (const InputError& e) {
    if (comm::rank() == 0) std::fprintf(stderr, "scaleproof: error: %s\n", e.what());
    code = 2;
  } catch (const nlohmann::json::exception& e) {
    // A wrong-typed or missing field of an input file is bad input; elsewhere a fault.
    const std::string where = input_error_from(e);
    if (comm::rank() == 0)
      std::fprintf(stderr, "scaleproof: %s: %s\n", where.empty() ? "failed" : "error",
                   where.empty() ? e.what() : where.c_str());
    code = where.empty() ? 3 : 2;
  } catch (const std::exception& e) {
    if (comm::rank() == 0) std::fprintf(stderr, "scaleproof: failed: %s\n", e.what());
    code = 3;
  }
  watchdog::stop();
  if (kokkos_up) Kokkos::finalize();
  comm::finalize();
  return code;
}
