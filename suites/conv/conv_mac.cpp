// `scaleproof conv-mac RESULTS [--size S]`: memory access cost of every
// convolution technique's own structure (the block or layer of variants[0]):
// the bytes it must move layer by layer (inputs, weights, outputs and the
// intermediates between layers, as the technique declares them from its
// shapes for the roofline), its FLOPs, their ratio (arithmetic intensity),
// and whether it is memory-bound on the machine the results folder measured:
// intensity below the balance P / BW (the peak of the case's dtype over
// STREAM bandwidth, MODELS.md "Roofline"). Markdown on stdout.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "scaleproof/params.hpp"
#include "scaleproof/registry.hpp"

namespace {

struct Roofs {
  double bandwidth = 0;
  nlohmann::json peak;  // FLOP/s by dtype
  double balance(const std::string& dtype) const {
    const double p = peak.value(dtype, peak.value("fp32", 0.0));
    return p / bandwidth;
  }
};

Roofs machine_roofs(const std::string& dir) {
  std::ifstream f(dir + "/machine.json");
  if (!f) throw sp::InputError("no machine.json in '" + dir + "' (a `scaleproof run` results folder)");
  nlohmann::json m;
  try {
    f >> m;
  } catch (const std::exception&) {
    throw sp::InputError("'" + dir + "/machine.json' is not valid JSON");
  }
  Roofs r;
  r.bandwidth = m.value("bandwidth_Bps", 0.0);
  if (m.contains("peak_flops") && m["peak_flops"].is_object()) r.peak = m["peak_flops"];
  if (!(r.bandwidth > 0) || !(r.peak.value("fp32", 0.0) > 0))
    throw sp::InputError("'" + dir + "/machine.json' has no fp32 peak or bandwidth (run the roofline family with it)");
  return r;
}

int print_mac(const std::string& dir, const std::string& size_name) {
  const sp::Size size = sp::parse_size(size_name);
  const Roofs roofs = machine_roofs(dir);
  std::printf("machine balance: %.3g FLOP/B fp32 (peak / bandwidth from %s/machine.json)\n\n", roofs.balance("fp32"),
              dir.c_str());
  std::printf(
      "| technique | structure | shape | MAC MB | GFLOP | FLOP/B | balance | bound |\n"
      "|---|---|---|---:|---:|---:|---:|---|\n");
  int memory_bound = 0, total = 0;
  for (const auto& r : sp::Registry::get().all()) {
    if (r.info.family != "conv" || r.info.test_only) continue;
    const auto t = r.make();
    for (const auto& ps : r.info.param_sets) {
      if (ps.size != size) continue;
      const sp::Counts c = t->counts(ps.params, 1);
      if (!(c.bytes() > 0)) continue;
      const double balance = roofs.balance(c.dtype);
      const bool mem = c.intensity() < balance;
      memory_bound += mem, ++total;
      std::printf("| %s | %s | %s | %.3f | %.3f | %.2f | %.2f | %s |\n", r.info.name.c_str(),
                  r.info.main_variant().c_str(), ps.params.label().c_str(), c.bytes() * 1e-6, c.flops * 1e-9,
                  c.intensity(), balance, mem ? "memory" : "compute");
    }
  }
  std::printf("\n%d of %d %s cases memory-bound\n", memory_bound, total, size_name.c_str());
  return 0;
}

sp::Registry::Command add_conv_mac(CLI::App& app) {
  static std::string dir, size = "small";
  auto* sub =
      app.add_subcommand("conv-mac", "Memory access cost and memory-bound blocks of the conv family (markdown)");
  sub->add_option("results", dir, "A results folder written by `scaleproof run` (for the machine balance)")->required();
  sub->add_option("--size", size, "Parameter-set size: conformance, small, medium, large");
  return {sub, [] { return print_mac(dir, size); }};
}

SP_REGISTER_COMMAND(add_conv_mac);

}  // namespace
