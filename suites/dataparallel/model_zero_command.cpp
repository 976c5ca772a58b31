// `scaleproof model zero --params P --ranks N`: the per-device memory and
// per-step traffic of DDP and ZeRO-1/2/3 from kernels/dataparallel/zero_model.hpp
// (docs/dataparallel.md, "Data parallelism and ZeRO"). With the defaults
// (mixed precision, 7.5e9 parameters, 64 ranks) it prints the paper's Figure 1
// values: 120, 31.4, 16.6, 1.9 GB.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>

#include "kernels/dataparallel/zero_model.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/option_range.hpp"
#include "scaleproof/params.hpp"
#include "scaleproof/registry.hpp"

namespace {

struct ZeroArgs {
  double params = 7.5e9;
  double ranks = 64;
  std::string precision = "mixed";
  bool ring = false;
};

sp::dp::Precision parse_precision(const std::string& s) {
  if (s == "mixed") return sp::dp::mixed_precision();
  if (s == "fp32") return sp::dp::fp32_adam();
  if (s == "fp64") return sp::dp::fp64_adam();
  throw sp::InputError("model zero: unknown precision '" + s + "' (mixed, fp32 or fp64)");
}

int run_zero(const ZeroArgs& a) {
  if (!(a.params > 0) || !std::isfinite(a.params)) throw sp::InputError("model zero: --params must be > 0");
  if (!(a.ranks >= 1) || a.ranks != std::floor(a.ranks))
    throw sp::InputError("model zero: --ranks must be an integer >= 1");
  if (a.ranks > a.params) throw sp::InputError("model zero: more ranks than parameters to shard over");
  const auto pr = parse_precision(a.precision);
  if (sp::comm::rank() != 0) return 0;
  std::printf("ZeRO model: Psi = %.4g parameters, N_d = %.0f, %s precision: %g+%g+%g bytes/param (param+grad+K)\n",
              a.params, a.ranks, pr.name.c_str(), pr.param, pr.grad, pr.optim);
  // "total GB" at the paper's precision (one decimal); "total bytes" for small models.
  std::printf("%-20s %12s %12s %12s %12s %12s %14s %8s\n", "stage", "params GB", "grads GB", "optim GB", "total GB",
              "total bytes", "traffic GB", "x Psi");
  const double gb = 1e9;  // decimal GB, as the paper
  for (auto s : {sp::dp::Stage::ddp, sp::dp::Stage::zero1, sp::dp::Stage::zero2, sp::dp::Stage::zero3}) {
    const auto c = sp::dp::zero_cost(s, a.params, a.ranks, pr, a.ring);
    std::printf("%-20s %12.4g %12.4g %12.4g %12.1f %12.4g %14.4g %8.3g\n", sp::dp::stage_name(s), c.params / gb,
                c.grads / gb, c.optim / gb, c.total() / gb, c.total(), c.traffic / gb,
                c.traffic / (a.params * pr.comm_grad()));
  }
  std::printf("parameter server: server sends+receives %.4g GB per step (2 (N_d-1) Psi)\n",
              sp::dp::param_server_load(a.params, a.ranks, pr.comm_grad()) / gb);
  return 0;
}

sp::Registry::Command add_model_zero(CLI::App& app) {
  static ZeroArgs args;
  // `model` may be shared by several families: reuse it if another registered it first.
  CLI::App* model = nullptr;
  for (auto* s : app.get_subcommands([](CLI::App*) { return true; }))
    if (s->get_name() == "model") model = s;
  if (!model) {
    model = app.add_subcommand("model", "Analytical models (no measurement)");
    model->require_subcommand(1);
  }
  auto* zero = model->add_subcommand("zero", "Per-device memory and traffic of DDP and ZeRO stages 1-3");
  sp::cli::positive(zero->add_option("--params,-P", args.params, "Model parameters Psi (e.g. 7.5e9)"), 1e18)
      ->capture_default_str();
  sp::cli::range(zero->add_option("--ranks,-N", args.ranks, "Data-parallel ranks N_d"), 1, 1e9)->capture_default_str();
  zero->add_option("--precision", args.precision, "mixed (2+2+12), fp32 (4+4+8) or fp64 (8+8+16)")
      ->capture_default_str();
  zero->add_flag("--ring", args.ring, "Exact ring traffic (N_d-1)/N_d instead of the paper's limit");
  return {zero, [] { return run_zero(args); }};
}

SP_REGISTER_COMMAND(add_model_zero);

}  // namespace
