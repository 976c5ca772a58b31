// `scaleproof conv-table RESULTS`: the conv family's comparison table from a
// results folder's verdicts.json: for every technique and shape, each
// structure's parameters and conv FLOPs (counted from the built layers),
// time, fraction of the roofline and which roof binds, and its time
// relative to the same structure run with the vendor library.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "scaleproof/params.hpp"
#include "scaleproof/registry.hpp"

namespace {

struct Row {
  double params = -1, flops = -1, seconds = -1, roof = -1;
  std::string bound;
};

std::string vendor_of(const std::string& variant) {
  return variant == "kokkos" ? "onednn" : variant + "_onednn";
}

int print_table(const std::string& dir) {
  std::ifstream f(dir + "/verdicts.json");
  if (!f) throw sp::InputError("no verdicts.json in '" + dir + "' (a `scaleproof run` results folder)");
  nlohmann::json vs;
  try {
    f >> vs;
  } catch (const std::exception&) {
    throw sp::InputError("'" + dir + "/verdicts.json' is not valid JSON");
  }
  // technique -> params -> variant -> row, in first-seen order of variants.
  std::map<std::string, std::map<std::string, std::map<std::string, Row>>> t;
  std::map<std::string, std::vector<std::string>> order;
  for (auto& v : vs) {
    const std::string tech = v.at("technique"), params = v.at("params"), var = v.at("variant");
    if (sp::Registry::get().find(tech) == nullptr || sp::Registry::get().find(tech)->info.family != "conv") continue;
    auto& row = t[tech][params][var];
    auto& o = order[tech];
    if (std::find(o.begin(), o.end(), var) == o.end()) o.push_back(var);
    const std::string q = v.at("quantity");
    if (q == "parameters") row.params = v.at("measured");
    if (q == "conv FLOPs") row.flops = v.at("measured");
    if (q == "roofline time") {
      row.seconds = v.at("measured");
      row.roof = v.at("ratio");
      const std::string note = v.at("note");
      row.bound = note.substr(0, note.find('-'));
    }
  }
  std::printf("| technique | shape | structure | parameters | conv GFLOP | time ms | %% of roof | bound | vendor time / ours |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---|---:|\n");
  for (auto& [tech, by_params] : t)
    for (auto& [params, rows] : by_params)
      for (auto& var : order[tech]) {
        if (!rows.count(var) || var.find("onednn") != std::string::npos || var == "cudnn") continue;
        const Row& r = rows.at(var);
        const auto vend = rows.find(vendor_of(var));
        char vendor[32] = "-";
        if (vend != rows.end() && vend->second.seconds > 0 && r.seconds > 0)
          std::snprintf(vendor, sizeof vendor, "%.2f", vend->second.seconds / r.seconds);
        std::printf("| %s | %s | %s | %.0f | %.3f | %.2f | %.1f | %s | %s |\n", tech.c_str(), params.c_str(), var.c_str(),
                    r.params, r.flops * 1e-9, r.seconds * 1e3, 100 * r.roof, r.bound.c_str(), vendor);
      }
  return 0;
}

sp::Registry::Command add_conv_table(CLI::App& app) {
  static std::string dir;
  auto* sub = app.add_subcommand("conv-table", "Conv family comparison table (markdown) from a results folder");
  sub->add_option("results", dir, "A results folder written by `scaleproof run`")->required();
  return {sub, [] { return print_table(dir); }};
}

SP_REGISTER_COMMAND(add_conv_table);

}  // namespace
