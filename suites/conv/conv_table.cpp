// `scaleproof conv-table RESULTS`: the conv family's comparison table from a
// results folder's verdicts.json: for every technique and shape, each
// structure's parameters and conv FLOPs (counted from the built layers),
// time, fraction of the roofline and which roof binds, and its time
// relative to the same structure run with the vendor library in the layout
// the library chose (the baseline) and on plain NCHW tensors, with the
// implementation and activation layout the library picked for each.
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
  std::string bound, vendor;  // vendor: what the library picked, from the verdict's note
};

std::string vendor_of(const std::string& variant) { return variant == "kokkos" ? "onednn" : variant + "_onednn"; }

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
      const auto at = note.find("oneDNN ");
      if (at != std::string::npos) row.vendor = note.substr(at + 7);
    }
  }
  std::printf(
      "| technique | shape | structure | parameters | conv GFLOP | time ms | %% of roof | bound "
      "| vendor picked | vendor ms | vendor time / ours | plain picked | plain ms | plain time / ours |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---|---|---:|---:|---|---:|---:|\n");
  for (auto& [tech, by_params] : t)
    for (auto& [params, rows] : by_params)
      for (auto& var : order[tech]) {
        if (!rows.count(var) || var.find("onednn") != std::string::npos || var == "cudnn") continue;
        const Row& r = rows.at(var);
        // The same structure with the library in its chosen layout, then on plain tensors.
        std::string cells;
        for (const std::string& v : {vendor_of(var), vendor_of(var) + "_plain"}) {
          const auto vend = rows.find(v);
          const bool timed = vend != rows.end() && vend->second.seconds > 0 && r.seconds > 0;
          char buf[96] = " - | - |";
          if (timed)
            std::snprintf(buf, sizeof buf, " %.2f | %.2f |", vend->second.seconds * 1e3,
                          vend->second.seconds / r.seconds);
          const std::string picked = vend != rows.end() && !vend->second.vendor.empty() ? vend->second.vendor : "-";
          cells += " " + picked + " |" + buf;
        }
        std::printf("| %s | %s | %s | %.0f | %.3f | %.2f | %.1f | %s |%s\n", tech.c_str(), params.c_str(), var.c_str(),
                    r.params, r.flops * 1e-9, r.seconds * 1e3, 100 * r.roof, r.bound.c_str(), cells.c_str());
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
