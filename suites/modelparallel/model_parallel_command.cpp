// `scaleproof model parallel`: the memory view, per-rank bytes of
// parameters, gradients, optimizer state and activations for data (DDP,
// ZeRO-1/2/3), tensor and pipeline parallelism side by side
// (suites/modelparallel/memory_view.hpp). Defaults: GPT-3 175B's shape
// (96 layers, h 12288, 96 heads, s 2048), t = 8, p = 8, N_d = 64.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "scaleproof/comm.hpp"
#include "scaleproof/option_range.hpp"
#include "scaleproof/params.hpp"
#include "scaleproof/registry.hpp"
#include "suites/modelparallel/memory_view.hpp"

namespace {

struct ViewArgs {
  sp::mp::ModelShape shape;
  sp::mp::Parallelism par{64, 8, 8, 1, 8};
  std::string schedule = "1f1b";
};

int run_view(ViewArgs a) {
  auto& s = a.shape;
  auto& par = a.par;
  par.schedule = sp::mp::parse_schedule(a.schedule);
  for (double x : {s.layers, s.hidden, s.heads, s.seq, s.micro_batch})
    if (!(x >= 1) || x != static_cast<long long>(x))
      throw sp::InputError("model parallel: shape values must be integers >= 1");
  if (par.dp < 1 || par.tp < 1) throw sp::InputError("model parallel: --dp and --tp must be >= 1");
  if (static_cast<long long>(s.heads) % par.tp != 0)
    throw sp::InputError("model parallel: heads = " + std::to_string(static_cast<long long>(s.heads)) +
                         " is not divisible by t = " + std::to_string(par.tp));
  if (static_cast<long long>(s.hidden) % static_cast<long long>(s.heads) != 0 ||
      static_cast<long long>(s.hidden) % par.tp != 0)
    throw sp::InputError("model parallel: hidden size " + std::to_string(static_cast<long long>(s.hidden)) +
                         " is not divisible by heads and t");
  sp::mp::check_shape(par.schedule, par.pp, par.m, par.v, static_cast<int>(s.layers));
  if (sp::comm::rank() != 0) return 0;
  std::printf("memory per rank, GPT-style model: L=%.0f h=%.0f a=%.0f s=%.0f b=%.0f, Psi = %.4g parameters\n", s.layers,
              s.hidden, s.heads, s.seq, s.micro_batch, s.params());
  std::printf(
      "model states 2+2+12 bytes/param (mixed-precision Adam); activations 16-bit, Korthikanti et al. Table 2\n");
  std::printf("%-34s %11s %11s %11s %11s %11s\n", "layout", "params GB", "grads GB", "optim GB", "activ. GB",
              "total GB");
  for (auto& r : sp::mp::memory_view(s, par))
    std::printf("%-34s %11.4g %11.4g %11.4g %11.4g %11.4g\n", r.layout.c_str(), r.params / 1e9, r.grads / 1e9,
                r.optim / 1e9, r.acts / 1e9, r.total() / 1e9);
  return 0;
}

sp::Registry::Command add_model_parallel(CLI::App& app) {
  static ViewArgs args;
  // `model` is shared by several families: reuse it if another registered it first.
  CLI::App* model = nullptr;
  for (auto* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() == "model") model = sub;
  if (!model) model = app.add_subcommand("model", "Analytical models (no measurement)");
  auto* c = model->add_subcommand("parallel", "Per-rank memory: DDP/ZeRO vs tensor vs pipeline parallelism");
  sp::cli::range(c->add_option("--layers", args.shape.layers, "Transformer layers L"), 1, 1e9)->capture_default_str();
  sp::cli::range(c->add_option("--hidden", args.shape.hidden, "Hidden size h"), 1, 1e9)->capture_default_str();
  sp::cli::range(c->add_option("--heads", args.shape.heads, "Attention heads a"), 1, 1e9)->capture_default_str();
  sp::cli::range(c->add_option("--seq", args.shape.seq, "Sequence length s"), 1, 1e9)->capture_default_str();
  sp::cli::range(c->add_option("--micro-batch", args.shape.micro_batch, "Micro-batch size b"), 1, 1e9)
      ->capture_default_str();
  sp::cli::range(c->add_option("--dp", args.par.dp, "Data-parallel ranks N_d"), 1, 1e9)->capture_default_str();
  sp::cli::range(c->add_option("--tp", args.par.tp, "Tensor-parallel degree t"), 1, 1e9)->capture_default_str();
  sp::cli::range(c->add_option("--pp", args.par.pp, "Pipeline stages p"), 1, 1e9)->capture_default_str();
  sp::cli::range(c->add_option("-m", args.par.m, "Micro-batches per step"), 1, 1e9)->capture_default_str();
  sp::cli::range(c->add_option("-v", args.par.v, "Chunks per rank (interleaved)"), 1, 1e9)->capture_default_str();
  c->add_option("--schedule", args.schedule, "gpipe, 1f1b or interleaved")->capture_default_str();
  return {c, [] { return run_view(args); }};
}

SP_REGISTER_COMMAND(add_model_parallel);

}  // namespace
