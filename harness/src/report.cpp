#include "report.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "models.hpp"
#include "number_format.hpp"
#include "results.hpp"
#include "summary.hpp"

namespace fs = std::filesystem;

namespace sp {

namespace {

// A number written by the checker; JSON has no inf or NaN, nlohmann writes
// them as null (e.g. a relative error against an exact zero is inf).
double num(const nlohmann::json& r, const char* key) {
  return r.contains(key) && r[key].is_number() ? r[key].get<double>() : (r.contains(key) ? INFINITY : 0.0);
}

std::string manifest_section(const nlohmann::json& m) {
  std::string s = "## Manifest\n\n| key | value |\n|---|---|\n";
  for (auto& [k, v] : m.items()) s += "| " + k + " | " + (v.is_string() ? v.get<std::string>() : v.dump()) + " |\n";
  if (m.value("oversubscribed", false))
    s += "\n**Oversubscribed**: ranks x threads exceed the cores; timings are not meaningful.\n";
  return s + "\n";
}

std::string check_section(const nlohmann::json& rows) {
  std::string s = "## Conformance (kernel vs reference)\n\n";
  s += "| technique | variant | params | result | max abs err | max rel err | bound | #wrong | bound rule |\n";
  s += "|---|---|---|---|---|---|---|---|---|\n";
  int pass = 0, fail = 0;
  for (auto& r : rows) {
    const bool ok = r.value("passed", false);
    (ok ? pass : fail)++;
    std::string rule = r.value("error", "").empty() ? r.value("bound_rule", "") : "error: " + r.value("error", "");
    s += "| " + r.value("technique", "") + " | " + r.value("variant", "") + " | " + r.value("params", "") + " | " +
         (ok ? "PASSED" : "**FAILED**") + " | " + fmt("%.3g", num(r, "max_abs_err")) + " | " +
         fmt("%.3g", num(r, "max_rel_err")) + " | " + fmt("%.3g", num(r, "max_bound")) + " | " +
         std::to_string(r.value("wrong", 0LL)) + " | " + rule + " |\n";
  }
  return s + "\n" + std::to_string(pass) + " passed, " + std::to_string(fail) + " failed.\n\n";
}

std::string bench_section(const std::vector<MeasuredCase>& cases) {
  std::string s = "## Benchmarks (median over repetitions; min..max)\n\n";
  s += "Time is the mean call of a repetition; the call statistics (min, median, p90, p99, max) are those of "
       "single calls within a repetition (each the slowest rank's; the median over repetitions of each statistic); "
       "rank imbalance is the slowest rank's median "
       "call over the fastest's.\n\n";
  s += "| technique | variant | params | time | min..max | call min / median / p90 / p99 / max | rank imbalance | "
       "FLOP/s | bytes/s | AI (FLOP/B) |\n";
  s += "|---|---|---|---|---|---|---|---|---|---|\n";
  for (auto& c : cases) {
    auto get = [&](const char* k) {
      auto it = c.m.counters.find(k);
      return it == c.m.counters.end() ? 0.0 : it->second;
    };
    const double t = c.m.seconds;
    const bool timed = c.m.counters.count("t_median_s") > 0;
    const std::string calls = !timed ? "-"
                                     : si(get("t_min_s"), "s") + " / " + si(get("t_median_s"), "s") + " / " +
                                           si(get("t_p90_s"), "s") + " / " + si(get("t_p99_s"), "s") + " / " +
                                           si(get("t_max_s"), "s");
    s += "| " + c.technique + " | " + c.variant + " | " + c.params + " | " + si(t, "s") + " | " + si(c.min_s, "s") +
         ".." + si(c.max_s, "s") + " | " + calls + " | " + (timed ? fmt("%.3g", get("rank_imbalance")) : "-") + " | " +
         (get("flop") > 0 ? si(get("flop") / t, "FLOP/s") : "-") + " | " +
         (get("bytes") > 0 ? si(get("bytes") / t, "B/s") : "-") + " | " + fmt("%.3g", get("AI")) + " |\n";
  }
  return s + "\n";
}

std::string verdict_section(const std::vector<Verdict>& vs, const nlohmann::json& machine) {
  std::string s = "## Predictions and verdicts\n\n";
  s += "Roofs measured in this run: bandwidth " + si(machine.value("bandwidth_Bps", 0.0), "B/s");
  for (auto& [k, v] : machine["peak_flops"].items()) s += ", peak " + k + " " + si(v.get<double>(), "FLOP/s");
  s += ".\n\n| technique | variant | params | quantity | predicted | measured | judged | band | verdict | note |\n";
  s += "|---|---|---|---|---|---|---|---|---|---|\n";
  int pass = 0, fail = 0, info = 0;
  for (auto& v : vs) {
    (v.status == Status::pass ? pass : v.status == Status::fail ? fail : info)++;
    std::string band =
        "[" + fmt("%.3g", v.band_lo) + ", " + (std::isinf(v.band_hi) ? "inf" : fmt("%.3g", v.band_hi)) + "]";
    s += "| " + v.technique + " | " + v.variant + " | " + v.params + " | " + v.quantity + " | " +
         fmt("%.4g", v.predicted) + " " + v.unit + " | " + fmt("%.4g", v.measured) + " " + v.unit + " | " +
         fmt("%.3g", v.ratio) + " | " + band + " | " + (v.status == Status::fail ? "**FAIL**" : to_string(v.status)) +
         " | " + v.note + " |\n";
  }
  return s + "\n" + std::to_string(pass) + " PASS, " + std::to_string(fail) + " FAIL, " + std::to_string(info) +
         " INFO (reported, not judged).\n\n";
}

}  // namespace

std::string render_report(const std::string& dir, const std::string& title) {
  if (!fs::is_directory(dir)) throw InputError("no results folder at " + dir);
  const fs::path d = fs::path(dir).lexically_normal();
  const std::string name = d.has_filename() ? d.filename().string() : d.parent_path().filename().string();
  std::string out = "# ScaleProof report: " + (title.empty() ? name : title) + "\n\n";
  if (fs::exists(d / "verdicts.json") || fs::exists(d / "job.json")) out += render_summary(d.string());
  if (fs::exists(d / "manifest.json")) out += manifest_section(read_json((d / "manifest.json").string()));
  if (fs::exists(d / "check.json")) out += check_section(read_json((d / "check.json").string()));
  if (fs::exists(d / "bench.json")) out += bench_section(read_measurements(read_json((d / "bench.json").string())));
  if (fs::exists(d / "verdicts.json")) {
    auto machine = fs::exists(d / "machine.json") ? read_json((d / "machine.json").string()) : nlohmann::json::object();
    if (!machine.contains("peak_flops")) machine["peak_flops"] = nlohmann::json::object();
    out += verdict_section(verdicts_from_json(read_json((d / "verdicts.json").string())), machine);
  }
  if (fs::exists(d / "roofline.png"))
    out += "## Roofline\n\n![roofline: each kernel's point under the measured roofs](roofline.png)\n\n";
  // Sections families or the scaling harness add as extra Markdown files.
  for (auto& e : fs::directory_iterator(d))
    if (e.path().extension() == ".md" && e.path().filename() != "report.md") {
      std::ifstream f(e.path());
      out += std::string(std::istreambuf_iterator<char>(f), {}) + "\n";
    }
  return out;
}

}  // namespace sp
