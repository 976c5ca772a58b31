#include "summary.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "models.hpp"
#include "number_format.hpp"
#include "results.hpp"
#include "scaleproof/registry.hpp"

namespace fs = std::filesystem;

namespace sp {

namespace {

// JSON has no NaN or infinity: a non-finite figure is written as null.
double num(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

nlohmann::json load(const fs::path& d, const char* file, nlohmann::json fallback) {
  return fs::exists(d / file) ? read_json((d / file).string()) : fallback;
}

struct FamilyRow {
  std::set<std::string> techniques;
  std::set<int> ranks;
  int passed = 0, failed = 0, pass = 0, fail = 0, info = 0;
  std::vector<std::string> headlines;
};

// A verdict is a headline when its technique declares its quantity, alone
// or as "variant:quantity".
bool is_headline(const Verdict& v) {
  const Registered* r = Registry::get().find(v.technique);
  if (!r) return false;
  for (auto& h : r->info.headline) {
    if (h == v.quantity || h == v.variant + ":" + v.quantity) return true;
    if (h == kHeadlineVsBaseline && !r->info.baseline.empty() && v.quantity == "throughput vs " + r->info.baseline)
      return true;
  }
  return false;
}

std::string headline_text(const Verdict& v) {
  std::string s = v.technique + (v.variant.empty() ? "" : " " + v.variant) + " " + v.params + ": " + v.quantity + " ";
  if (v.unit == "x")
    s += fmt("%.3g", v.measured) + "x";
  else
    s += fmt("%.4g", v.measured) + " " + v.unit + " vs " + fmt("%.4g", v.predicted) + " predicted";
  return s + " [" + to_string(v.status) + "]";
}

std::string verdict_failure(const Verdict& v) {
  return "verdict " + v.technique + " " + v.variant + " " + v.params + ", " + v.quantity + ": judged " +
         fmt("%.3g", v.ratio) + " outside [" + fmt("%.3g", v.band_lo) + ", " +
         (std::isinf(v.band_hi) ? std::string("inf") : fmt("%.3g", v.band_hi)) + "] (measured " +
         fmt("%.4g", v.measured) + " " + v.unit + ", predicted " + fmt("%.4g", v.predicted) + " " + v.unit + ")" +
         (v.note.empty() ? "" : "; " + v.note);
}

std::string check_failure(const nlohmann::json& r) {
  std::string s = "conformance " + r.value("technique", "") + " " + r.value("variant", "") + " " +
                  r.value("params", "") + " at " + std::to_string(r.value("ranks", 1)) + " rank(s): ";
  if (!r.value("error", "").empty()) return s + r.value("error", "");
  return s + std::to_string(r.value("wrong", 0LL)) + " of " + std::to_string(r.value("checked", 0LL)) +
         " elements outside their bound (max abs err " + fmt("%.3g", num(r, "max_abs_err")) + ", bound " +
         fmt("%.3g", num(r, "max_bound")) + ")";
}

}  // namespace

std::string render_summary(const std::string& dir) {
  const fs::path d(dir);
  const auto manifest = load(d, "manifest.json", nlohmann::json::object());
  const auto machine = load(d, "machine.json", nlohmann::json::object());
  const auto checks = load(d, "check.json", nlohmann::json::array());
  const auto job = load(d, "job.json", nlohmann::json::object());
  const auto verdicts = fs::exists(d / "verdicts.json") ? verdicts_from_json(read_json((d / "verdicts.json").string()))
                                                        : std::vector<Verdict>{};
  std::string s = "## Summary\n\n";
  s += "Machine: " + manifest.value("cpu_model", std::string("?")) + ", " + fmt("%.0f", num(manifest, "cores")) +
       " cores, host " + manifest.value("hostname", std::string("?")) + "; GPU " +
       manifest.value("gpu", std::string("?")) + "; Kokkos " + manifest.value("kokkos_version", std::string("?")) +
       " (" + manifest.value("kokkos_backends", std::string("?")) + ").\n";
  if (machine.contains("bandwidth_Bps")) {
    s += "Roofs measured in this run: STREAM triad " + si(num(machine, "bandwidth_Bps"), "B/s");
    const auto peaks = machine.value("peak_flops", nlohmann::json::object());
    for (auto& [k, v] : peaks.items()) s += ", peak " + k + " " + si(v.is_number() ? v.get<double>() : NAN, "FLOP/s");
    s += ".\n";
  }
  std::vector<std::string> failures;
  const auto launches = job.value("launches", nlohmann::json::array());
  const auto skipped = job.value("skipped", nlohmann::json::array());
  for (auto& l : launches) {
    s += "Multi-rank techniques launched at " + std::to_string(l.value("ranks", 0)) + " ranks x " +
         std::to_string(l.value("threads", 0)) + " thread(s) through `" + l.value("launcher", "") +
         "`: " + l.value("result", "") + " in " + fmt("%.0f", num(l, "wall_s")) + " s.\n";
    if (l.value("status", "") != "ok")
      failures.push_back("launch at " + std::to_string(l.value("ranks", 0)) + " ranks " + l.value("status", "") + ": " +
                         l.value("diagnosis", "") + " (log " + l.value("log", "") + "); the other results are kept");
  }
  for (auto& k : skipped) s += "Skipped: " + k.value("technique", "") + ": " + k.value("reason", "") + ".\n";

  std::map<std::string, FamilyRow> fam;
  for (auto& r : checks) {
    auto& row = fam[r.value("family", "")];
    row.techniques.insert(r.value("technique", ""));
    row.ranks.insert(r.value("ranks", 1));
    if (r.value("passed", false))
      row.passed++;
    else
      row.failed++, failures.push_back(check_failure(r));
  }
  for (auto& v : verdicts) {
    const Registered* reg = Registry::get().find(v.technique);
    auto& row = fam[reg ? reg->info.family : "?"];
    row.techniques.insert(v.technique);
    (v.status == Status::pass ? row.pass : v.status == Status::fail ? row.fail : row.info)++;
    if (v.status == Status::fail) failures.push_back(verdict_failure(v));
    if (is_headline(v)) row.headlines.push_back(headline_text(v));
  }
  constexpr size_t kHeadlines = 6;
  s += "\n| family | techniques | ranks | conformance passed | failed | verdicts PASS | FAIL | INFO | headline figures "
       "|\n";
  s += "|---|---|---|---|---|---|---|---|---|\n";
  for (auto& [name, r] : fam) {
    std::string ranks, heads;
    for (int n : r.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(n);
    for (size_t i = 0; i < r.headlines.size() && i < kHeadlines; ++i) heads += (i ? "<br>" : "") + r.headlines[i];
    if (r.headlines.size() > kHeadlines)
      heads += "<br>(" + std::to_string(r.headlines.size() - kHeadlines) + " more in the verdict table)";
    s += "| " + name + " | " + std::to_string(r.techniques.size()) + " | " + (ranks.empty() ? "-" : ranks) + " | " +
         std::to_string(r.passed) + " | " + std::to_string(r.failed) + " | " + std::to_string(r.pass) + " | " +
         std::to_string(r.fail) + " | " + std::to_string(r.info) + " | " + heads + " |\n";
  }
  s += "\n### Failures\n\n";
  if (failures.empty()) s += "None.\n";
  for (auto& f : failures) s += "- " + f + "\n";
  return s + "\n";
}

}  // namespace sp
