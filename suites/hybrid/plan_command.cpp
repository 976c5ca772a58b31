// `scaleproof plan`: the hybrid-parallel layouts of a model on N ranks, ranked
// by predicted step time, with why the others were rejected; --verify K runs
// a sample of them with the composed step and judges the predictions
// (docs/planner.md).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness/src/launch.hpp"
#include "harness/src/manifest.hpp"
#include "harness/src/results.hpp"
#include "kernels/hybrid/presets.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "scaleproof/option_range.hpp"
#include "scaleproof/params.hpp"
#include "scaleproof/registry.hpp"
#include "suites/hybrid/plan_machine.hpp"
#include "suites/hybrid/plan_print.hpp"
#include "suites/hybrid/plan_verify.hpp"

namespace {

using namespace sp::hybrid;

struct PlanArgs {
  std::string preset;
  int layers = 0, hidden = 0, heads = 0, seq = 0, vocab = 0, batch = 0, ffn = 0;
  int ranks = 0;
  double memory_gib = 80;
  std::string storage = "bf16";
  std::string machine;
  double gemm_gflops = 0, alpha_us = -1, beta_gbs = 0, gamma_gbs = 0;
  double tp_alpha_us = 0, tp_beta_gbs = 0;  // the tensor-parallel group's own link (e.g. inside a node)
  int top = 10;
  std::string json;
  int verify = 0;
  double min_time = 0.05;
  bool strict = false;
  std::string launcher;
  CLI::App* sub = nullptr;
};

bool given(const PlanArgs& a, const char* opt) { return a.sub->count(opt) > 0; }

ModelShape model_of(const PlanArgs& a, int* preset_gpus) {
  const char* shape_opts[] = {"--layers", "--hidden", "--heads", "--seq", "--vocab", "--batch", "--ffn"};
  if (!a.preset.empty()) {
    for (const char* o : shape_opts)
      if (given(a, o)) throw sp::InputError(std::string("plan: ") + o + " cannot be combined with --preset");
    const Preset* p = find_preset(a.preset);
    if (!p) throw sp::InputError("plan: unknown --preset '" + a.preset + "' (" + preset_names() + ")");
    *preset_gpus = p->gpus;
    return p->model;
  }
  for (const char* o : {"--layers", "--hidden", "--heads", "--seq", "--batch"})
    if (!given(a, o))
      throw sp::InputError(std::string("plan: give --preset NAME or the model's shape (") + o + " missing)");
  ModelShape m;
  m.layers = a.layers, m.hidden = a.hidden, m.heads = a.heads, m.seq = a.seq, m.vocab = a.vocab;
  m.global_batch = a.batch, m.ffn = a.ffn;
  // The model's own rules (layout_error checks them first, for every layout).
  const std::string err = layout_error(m, Layout{}, 1);
  if (err.rfind("model:", 0) == 0) throw sp::InputError("plan: " + err);
  return m;
}

sp::hybrid::MachineFigures machine_of(const PlanArgs& a) {
  const bool named =
      given(a, "--gemm-gflops") || given(a, "--alpha-us") || given(a, "--beta-gbs") || given(a, "--gamma-gbs");
  if (!a.machine.empty() && named)
    throw sp::InputError("plan: --machine excludes --gemm-gflops, --alpha-us, --beta-gbs and --gamma-gbs");
  sp::hybrid::MachineFigures mf;
  if (!a.machine.empty()) {
    mf = plan::machine_from_file(a.machine);
  } else {
    if (!given(a, "--gemm-gflops") || !given(a, "--alpha-us") || !given(a, "--beta-gbs"))
      throw sp::InputError("plan: give --machine FILE, or --gemm-gflops, --alpha-us and --beta-gbs");
    mf = plan::machine_from_figures(a.gemm_gflops, a.alpha_us, a.beta_gbs, a.gamma_gbs);
  }
  if (given(a, "--tp-alpha-us")) mf.tp.alpha = a.tp_alpha_us * 1e-6;
  if (given(a, "--tp-beta-gbs")) mf.tp.beta = 1e-9 / a.tp_beta_gbs;
  return mf;
}

// Started outside any MPI launcher, --verify launches this same command line
// on --ranks ranks (default 2), as the main job launches its multi-rank part,
// and returns the launch's exit code.
int launch_verify(const PlanArgs& a) {
  const int n = given(a, "--ranks") ? a.ranks : 2;
  if (n < 2) throw sp::InputError("plan --verify: --ranks must be 2 or more (the verification measures collectives)");
  std::vector<std::string> argv = sp::Launcher::from(a.launcher).argv(n);
  argv.push_back(sp::self_exe());
  std::ifstream f("/proc/self/cmdline");
  std::string arg;
  for (bool first = true; std::getline(f, arg, '\0'); first = false)
    if (!first) argv.push_back(arg);
  if (!given(a, "--ranks")) argv.insert(argv.end(), {"--ranks", std::to_string(n)});
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::string threads = std::to_string(std::max(1u, cores / static_cast<unsigned>(n)));
  const std::string log =
      (std::filesystem::temp_directory_path() / ("sp-plan-verify-" + std::to_string(::getpid()) + ".log")).string();
  const sp::LaunchResult r = sp::run_with_watchdog(argv, {{"OMP_NUM_THREADS", threads}}, log, 3600, true);
  const std::string why = sp::last_line(log, true);
  std::error_code ec;
  std::filesystem::remove(log, ec);
  if (r.ok()) return 0;
  if (!r.timed_out && r.signal == 0 && (r.exit_code == 1 || r.exit_code == 2)) {
    if (r.exit_code == 2) std::fprintf(stderr, "%s\n", why.c_str());
    return r.exit_code;
  }
  std::fprintf(stderr, "scaleproof: plan --verify: the launch on %d ranks failed (%s)\n", n, r.describe().c_str());
  return 3;
}

int run_plan(const PlanArgs& a) {
  // Every input is checked before any work starts.
  if (given(a, "--launcher") && a.verify == 0) throw sp::InputError("plan: --launcher applies to --verify only");
  StorageType storage;
  try {
    storage = parse_storage(a.storage);
  } catch (const sp::InputError& e) {
    throw sp::InputError(std::string("plan: --storage: ") + e.what());
  }
  if (!a.json.empty()) sp::check_writable_file(a.json, "--json");
  if (a.verify > 0) {
    if (!a.preset.empty() || given(a, "--layers") || !a.machine.empty() || given(a, "--gemm-gflops") ||
        given(a, "--tp-beta-gbs") || given(a, "--tp-alpha-us"))
      throw sp::InputError(
          "plan --verify: plans a scaled-down shape on the measured machine; give no model or machine");
    plan::check_verifiable();
    // The machine's GEMM rate is measured in fp32: fp32 storage unless asked otherwise.
    const StorageType vstorage = given(a, "--storage") ? storage : StorageType::fp32;
    const bool launch = sp::comm::size() == 1 && !sp::under_launcher();
    plan::check_storage_runs(vstorage, launch ? (given(a, "--ranks") ? std::max(a.ranks, 2) : 2) : sp::comm::size());
    if (launch) return launch_verify(a);
    if (given(a, "--ranks") && a.ranks != sp::comm::size())
      throw sp::InputError("plan --verify: runs on the ranks it has (" + std::to_string(sp::comm::size()) +
                           "); --ranks must be that or absent");
    const plan::VerifyResult v = plan::verify(a.verify, vstorage, a.min_time, plan::kComposedStep,
                                              given(a, "--memory") ? a.memory_gib * 1073741824.0 : 0);
    const nlohmann::json manifest =
        a.json.empty() ? nlohmann::json()
                       : sp::collect_manifest({sp::process_command_line(), sp::comm::size(), sp::kx::concurrency()});
    if (sp::comm::rank() != 0) return 0;
    std::fputs(plan::verify_table(v).c_str(), stdout);
    if (!a.json.empty()) {
      nlohmann::json doc = plan::verify_json(v);
      doc["manifest"] = manifest;
      sp::write_file_atomic(a.json, doc.dump(2) + "\n");
    }
    return a.strict && !(v.mae_pass && v.rho_pass) ? 1 : 0;
  }
  int preset_gpus = 0;
  plan::Request r;
  r.model = model_of(a, &preset_gpus);
  r.ranks = given(a, "--ranks") ? a.ranks : preset_gpus;
  if (r.ranks < 1) throw sp::InputError("plan: --ranks is missing (the number of ranks to plan for)");
  r.memory_bytes = a.memory_gib * 1073741824.0;
  r.storage = storage;
  r.machine = machine_of(a);
  const plan::Plan p = plan::make_plan(r);
  const nlohmann::json manifest =
      a.json.empty() ? nlohmann::json()
                     : sp::collect_manifest({sp::process_command_line(), sp::comm::size(), sp::kx::concurrency()});
  if (sp::comm::rank() != 0) return p.ranked.empty() ? 1 : 0;
  std::fputs(plan::plan_table(r, p, a.top, a.preset).c_str(), stdout);
  if (!a.json.empty()) {
    nlohmann::json doc = plan::plan_json(r, p, a.top, a.preset);
    doc["manifest"] = manifest;
    sp::write_file_atomic(a.json, doc.dump(2) + "\n");
  }
  return p.ranked.empty() ? 1 : 0;
}

sp::Registry::Command add_plan(CLI::App& app) {
  static PlanArgs a;
  auto* c = app.add_subcommand(
      "plan", "Hybrid-parallel layouts (dp x tp x pp, schedule, ZeRO, checkpointing) ranked by predicted step time");
  a.sub = c;
  c->add_option("--preset", a.preset, "A published model: " + preset_names());
  sp::cli::range(c->add_option("--layers", a.layers, "Transformer blocks L"), 1, 1e6);
  sp::cli::range(c->add_option("--hidden", a.hidden, "Hidden size h"), 1, 1e6);
  sp::cli::range(c->add_option("--heads", a.heads, "Attention heads a"), 1, 1e5);
  sp::cli::range(c->add_option("--seq", a.seq, "Sequence length s"), 1, 1e7);
  sp::cli::range(c->add_option("--vocab", a.vocab, "Vocabulary V (0: no embedding or logits)"), 0, 1e8);
  sp::cli::range(c->add_option("--batch", a.batch, "Global batch B (sequences per step)"), 1, 1e7);
  sp::cli::range(c->add_option("--ffn", a.ffn, "MLP width (0: 4 h)"), 0, 1e7);
  sp::cli::range(c->add_option("--ranks,-N", a.ranks, "Ranks (GPUs) to plan for (default: the preset's)"), 1, 1 << 20);
  sp::cli::positive(c->add_option("--memory", a.memory_gib, "Memory per rank, GiB"), 1e6)->capture_default_str();
  c->add_option("--storage", a.storage, "fp32, fp16 or bf16 (16-bit: fp32 master weights)")->capture_default_str();
  c->add_option("--machine", a.machine, "A results folder (its bench.json) or a plan JSON: GEMM rate and alpha-beta");
  sp::cli::positive(c->add_option("--gemm-gflops", a.gemm_gflops, "GEMM rate per rank, GFLOP/s"), 1e9);
  sp::cli::range(c->add_option("--alpha-us", a.alpha_us, "Latency per message, microseconds"), 0, 1e7);
  sp::cli::positive(c->add_option("--beta-gbs", a.beta_gbs, "Bandwidth per rank, GB/s"), 1e6);
  sp::cli::positive(c->add_option("--gamma-gbs", a.gamma_gbs, "Reduction rate, GB/s (absent: free)"), 1e6);
  sp::cli::range(
      c->add_option("--tp-alpha-us", a.tp_alpha_us, "Tensor-parallel group's latency, us (default: the machine's)"), 0,
      1e7);
  sp::cli::positive(
      c->add_option("--tp-beta-gbs", a.tp_beta_gbs, "Tensor-parallel group's bandwidth, GB/s (default: the machine's)"),
      1e6);
  sp::cli::range(c->add_option("--top", a.top, "Layouts to print"), 1, 1e6)->capture_default_str();
  c->add_option("--json", a.json, "Write the plan (with the manifest) to this file, atomically");
  sp::cli::range(c->add_option("--verify", a.verify, "Run the top K and K spread layouts with the composed step"), 0,
                 64)
      ->capture_default_str();
  sp::cli::positive(c->add_option("--min-time", a.min_time, "Seconds per repetition of each --verify case"), 60)
      ->capture_default_str();
  c->add_flag("--strict", a.strict, "With --verify: exit 1 when a verdict fails");
  c->add_option("--launcher", a.launcher,
                "With --verify outside a launcher: how to start --ranks ranks ({n}; default mpiexec -n {n})");
  sp::Registry::Command cmd{c, [] { return run_plan(a); }};
  cmd.on_ranks = true;
  return cmd;
}

SP_REGISTER_COMMAND(add_plan);

}  // namespace
