#include "qualify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "models.hpp"
#include "results.hpp"
#include "stragglers.hpp"
#include "scaleproof/registry.hpp"

namespace fs = std::filesystem;

namespace sp {

namespace {

const std::set<std::string> kKinds = {"conformance",      "roof_fraction", "busbw",
                                      "prediction_error", "reference",     "straggler"};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// A kernel class names a family or a technique; "" matches every technique.
bool in_class(const std::string& cls, const std::string& technique) {
  if (cls.empty() || cls == technique) return true;
  auto* r = Registry::get().find(technique);
  return r && r->info.family == cls;
}

Criterion parse_criterion(const nlohmann::json& j, const std::string& path, size_t i) {
  const std::string where = path + ": criterion " + std::to_string(i);
  if (!j.is_object()) throw InputError(where + " is not an object");
  static const std::set<std::string> keys = {"name",     "kind",    "class",    "min",     "max",
                                             "min_GBps", "counter", "optional", "quantity"};
  for (auto& [k, v] : j.items())
    if (!keys.count(k)) throw InputError(where + ": unknown key '" + k + "'");
  Criterion c;
  if (!j.contains("kind") || !j["kind"].is_string()) throw InputError(where + ": no \"kind\"");
  c.kind = j["kind"];
  if (!kKinds.count(c.kind))
    throw InputError(where + ": unknown kind '" + c.kind +
                     "' (conformance, roof_fraction, busbw, prediction_error, reference, straggler)");
  c.cls = j.value("class", "");
  if (!c.cls.empty() && !Registry::get().find(c.cls)) {
    auto fams = Registry::get().families();
    if (std::find(fams.begin(), fams.end(), c.cls) == fams.end() && !j.value("optional", false))
      throw InputError(where + ": unknown class '" + c.cls +
                       "' (a family or technique; mark it optional if not built here)");
  }
  const char* key = c.kind == "roof_fraction"                               ? "min"
                    : c.kind == "busbw"                                     ? "min_GBps"
                    : c.kind == "prediction_error" || c.kind == "straggler" ? "max"
                                                                            : nullptr;
  if (key) {
    if (!j.contains(key) || !j[key].is_number())
      throw InputError(where + ": " + c.kind + " needs a number \"" + key + "\"");
    c.threshold = j[key];
    if (c.threshold < 0) throw InputError(where + ": \"" + key + "\" must be >= 0");
  }
  c.counter = j.value("counter", "busbw");
  c.quantity = j.value("quantity", "");
  c.optional = j.value("optional", false);
  c.name = j.value("name", c.kind + (c.cls.empty() ? "" : ":" + c.cls));
  return c;
}

CriterionResult no_data(const Criterion& c, const std::string& what) {
  return {c, c.optional ? CriterionStatus::skip : CriterionStatus::fail, 0,
          "no " + what + " in the results" + (c.optional ? " (optional)" : "")};
}

CriterionResult judge_conformance(const Criterion& c, const fs::path& d) {
  if (!fs::exists(d / "check.json")) return no_data(c, "check.json");
  int n = 0, failed = 0;
  std::string first;
  for (auto& r : read_json((d / "check.json").string())) {
    if (!in_class(c.cls, r.value("technique", ""))) continue;
    ++n;
    if (!r.value("passed", false)) {
      ++failed;
      if (first.empty()) first = r.value("technique", "") + " " + r.value("variant", "") + " " + r.value("params", "");
    }
  }
  if (!n) return no_data(c, "conformance case");
  return {c, failed ? CriterionStatus::fail : CriterionStatus::pass, static_cast<double>(failed),
          std::to_string(n - failed) + " of " + std::to_string(n) + " cases passed" +
              (failed ? "; first failure: " + first : "")};
}

CriterionResult judge_roof(const Criterion& c, const fs::path& d) {
  if (!fs::exists(d / "verdicts.json")) return no_data(c, "verdicts.json");
  double worst = INFINITY;
  std::string at;
  for (auto& v : verdicts_from_json(read_json((d / "verdicts.json").string())))
    if (v.quantity == "roofline time" && v.status != Status::info && in_class(c.cls, v.technique) && v.ratio < worst)
      worst = v.ratio, at = v.technique + " " + v.variant + " " + v.params;
  if (std::isinf(worst)) return no_data(c, "judged roofline verdict");
  return {c, worst >= c.threshold ? CriterionStatus::pass : CriterionStatus::fail, worst,
          "lowest fraction of roof " + fmt("%.3f", worst) + " (" + at + "), required >= " + fmt("%.3f", c.threshold)};
}

CriterionResult judge_busbw(const Criterion& c, const fs::path& d) {
  if (!fs::exists(d / "bench.json")) return no_data(c, "bench.json");
  double best = -1;
  std::string at;
  for (auto& m : read_measurements(read_json((d / "bench.json").string()))) {
    auto it = m.m.counters.find(c.counter);
    if (in_class(c.cls, m.technique) && it != m.m.counters.end() && it->second / 1e9 > best)
      best = it->second / 1e9, at = m.technique + " " + m.variant + " " + m.params;
  }
  if (best < 0) return no_data(c, "'" + c.counter + "' counter");
  return {
      c, best >= c.threshold ? CriterionStatus::pass : CriterionStatus::fail, best,
      "peak " + c.counter + " " + fmt("%.3g", best) + " GB/s (" + at + "), required >= " + fmt("%.3g", c.threshold)};
}

CriterionResult judge_prediction(const Criterion& c, const fs::path& d) {
  if (!fs::exists(d / "verdicts.json")) return no_data(c, "verdicts.json");
  double worst = -1;
  std::string at;
  // Model predictions: judged verdicts other than the roofline bound and the vendor-baseline ratio.
  for (auto& v : verdicts_from_json(read_json((d / "verdicts.json").string()))) {
    if (v.status == Status::info || v.quantity == "roofline time" || v.quantity.rfind("throughput vs", 0) == 0)
      continue;
    if (!in_class(c.cls, v.technique) || v.predicted == 0) continue;
    const double err = std::fabs(v.measured / v.predicted - 1);
    if (err > worst) worst = err, at = v.technique + " " + v.quantity + " " + v.params;
  }
  if (worst < 0) return no_data(c, "judged model prediction");
  return {c, worst <= c.threshold ? CriterionStatus::pass : CriterionStatus::fail, worst,
          "largest |measured/predicted - 1| " + fmt("%.3f", worst) + " (" + at +
              "), allowed <= " + fmt("%.3f", c.threshold)};
}

// Every multi-rank case: its slowest rank's time over the median of the other
// ranks' must not exceed 1 + max.
CriterionResult judge_straggler(const Criterion& c, const fs::path& d) {
  int n = 0, slow = 0;
  double worst = 0;
  std::string first, at;
  for (auto& r : rank_spreads_of(d.string())) {
    if (!in_class(c.cls, r.key.substr(0, r.key.find('/')))) continue;
    ++n;
    const std::string who = "rank " + std::to_string(r.slowest) + " on " + r.slow_host + " in " + r.key + ": " +
                            fmt("%.4g", r.slow_s) + " s, " + fmt("%.1f", 100 * r.excess) +
                            "% over the others' median " + fmt("%.4g", r.others_median_s) + " s";
    if (r.excess > c.threshold && !slow++) first = who;
    if (r.excess >= worst) worst = r.excess, at = who;
  }
  if (!n) return no_data(c, "multi-rank case with per-rank times");
  if (slow)
    return {c, CriterionStatus::fail, worst,
            std::to_string(slow) + " of " + std::to_string(n) + " cases have a straggler beyond " +
                fmt("%.0f%%", 100 * c.threshold) + "; first: " + first};
  return {c, CriterionStatus::pass, worst,
          "no rank beyond " + fmt("%.0f%%", 100 * c.threshold) + " of the others' median in " + std::to_string(n) +
              " cases; slowest: " + at};
}

// Every reference of the machine, within the criterion's class and quantity:
// lower x value <= measured <= upper x value.
CriterionResult judge_reference(const Criterion& c, const fs::path& d, const Profile& p, const QualifyOptions& q) {
  const std::string machine = q.machine.empty() ? results_machine(d.string()) : q.machine;
  auto it = p.references.find(machine);
  if (it == p.references.end() || it->second.empty()) {
    const std::string why = "no reference for machine '" + machine + "' in the profile";
    return {c, q.require_reference ? CriterionStatus::fail : CriterionStatus::skip, 0,
            why + (q.require_reference ? " (--require-reference)" : "")};
  }
  const auto measured = measured_quantities(d.string());
  int judged = 0, outside = 0, missing = 0;
  double worst = 1;
  std::string first;
  for (auto& r : it->second) {
    if (!c.quantity.empty() && r.quantity != c.quantity) continue;
    if (!in_class(c.cls, r.case_key.substr(0, r.case_key.find('/')))) continue;
    auto m = measured.find(r.case_key);
    if (m == measured.end() || !m->second.count(r.quantity)) {
      ++missing;
      continue;
    }
    ++judged;
    const double ratio = m->second.at(r.quantity) / r.value;
    if (std::fabs(std::log(ratio)) > std::fabs(std::log(worst))) worst = ratio;
    if (ratio < r.lower || ratio > r.upper) {
      if (!outside++)
        first = r.case_key + " " + r.quantity + " " + fmt("%.4g", m->second.at(r.quantity)) + " " + r.unit + " = " +
                fmt("%.3f", ratio) + " x reference, bounds [" + fmt("%.3f", r.lower) + ", " + fmt("%.3f", r.upper) +
                "]";
    }
  }
  if (!judged) return no_data(c, "case with a reference for '" + machine + "'");
  return {c, outside ? CriterionStatus::fail : CriterionStatus::pass, worst,
          std::to_string(judged - outside) + " of " + std::to_string(judged) + " within the references of '" + machine +
              "'" + (missing ? " (" + std::to_string(missing) + " not measured in this run)" : "") +
              (outside ? "; first outside: " + first : "; farthest " + fmt("%.3f", worst) + " x reference")};
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default: o += ch;
    }
  }
  return o;
}

}  // namespace

Profile load_profile(const std::string& path) {
  const auto& j = read_json(path);  // InputError if missing or malformed
  if (!j.is_object()) throw InputError(path + ": a profile is a JSON object");
  for (auto& [k, v] : j.items())
    if (k != "machine" && k != "description" && k != "criteria" && k != "references")
      throw InputError(path + ": unknown key '" + k + "'");
  if (!j.contains("machine") || !j["machine"].is_string()) throw InputError(path + ": no \"machine\" name");
  if (!j.contains("criteria") || !j["criteria"].is_array() || j["criteria"].empty())
    throw InputError(path + ": no \"criteria\" list");
  Profile p;
  p.machine = j["machine"];
  p.description = j.value("description", "");
  for (size_t i = 0; i < j["criteria"].size(); ++i) p.criteria.push_back(parse_criterion(j["criteria"][i], path, i));
  if (j.contains("references")) p.references = parse_references(j["references"], path);
  return p;
}

std::string results_machine(const std::string& dir) {
  for (const fs::path m : {fs::path(dir) / "manifest.json", fs::path(dir).parent_path() / "manifest.json"})
    if (fs::exists(m)) {
      const auto& j = read_json(m.string());
      if (j.is_object() && j.contains("hostname") && j["hostname"].is_string()) return j["hostname"];
    }
  return "";
}

std::vector<CriterionResult> qualify(const Profile& p, const std::string& dir, const QualifyOptions& q) {
  if (!fs::is_directory(dir)) throw InputError("no results folder at " + dir);
  std::vector<CriterionResult> out;
  for (auto& c : p.criteria) {
    if (c.kind == "conformance")
      out.push_back(judge_conformance(c, dir));
    else if (c.kind == "roof_fraction")
      out.push_back(judge_roof(c, dir));
    else if (c.kind == "busbw")
      out.push_back(judge_busbw(c, dir));
    else if (c.kind == "reference")
      out.push_back(judge_reference(c, dir, p, q));
    else if (c.kind == "straggler")
      out.push_back(judge_straggler(c, dir));
    else
      out.push_back(judge_prediction(c, dir));
  }
  return out;
}

const char* to_string(CriterionStatus s) {
  switch (s) {
    case CriterionStatus::pass: return "PASS";
    case CriterionStatus::fail: return "FAIL";
    case CriterionStatus::skip: return "SKIP";
  }
  return "?";
}

nlohmann::json to_json(const Profile& p, const std::vector<CriterionResult>& rs) {
  nlohmann::json a = nlohmann::json::array();
  for (auto& r : rs)
    a.push_back({{"name", r.c.name},
                 {"kind", r.c.kind},
                 {"class", r.c.cls},
                 {"threshold", r.c.threshold},
                 {"optional", r.c.optional},
                 {"status", to_string(r.status)},
                 {"value", r.value},
                 {"detail", r.detail}});
  return {{"machine", p.machine}, {"description", p.description}, {"criteria", a}};
}

std::string junit_xml(const Profile& p, const std::vector<CriterionResult>& rs) {
  int failures = 0, skipped = 0;
  for (auto& r : rs) failures += r.status == CriterionStatus::fail, skipped += r.status == CriterionStatus::skip;
  const std::string suite = xml_escape("scaleproof qualify " + p.machine);
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" + suite + "\" tests=\"" +
                  std::to_string(rs.size()) + "\" failures=\"" + std::to_string(failures) + "\" skipped=\"" +
                  std::to_string(skipped) + "\">\n  <testsuite name=\"" + suite + "\" tests=\"" +
                  std::to_string(rs.size()) + "\" failures=\"" + std::to_string(failures) + "\" skipped=\"" +
                  std::to_string(skipped) + "\" errors=\"0\">\n";
  for (auto& r : rs) {
    x += "    <testcase classname=\"qualify." + xml_escape(p.machine) + "\" name=\"" + xml_escape(r.c.name) + "\"";
    if (r.status == CriterionStatus::pass)
      x += ">\n      <system-out>" + xml_escape(r.detail) + "</system-out>\n    </testcase>\n";
    else if (r.status == CriterionStatus::skip)
      x += ">\n      <skipped message=\"" + xml_escape(r.detail) + "\"/>\n    </testcase>\n";
    else
      x += ">\n      <failure message=\"" + xml_escape(r.detail) + "\"/>\n    </testcase>\n";
  }
  return x + "  </testsuite>\n</testsuites>\n";
}

std::string qualification_markdown(const Profile& p, const std::vector<CriterionResult>& rs) {
  std::string s = "## Qualification: " + p.machine + "\n\n" + (p.description.empty() ? "" : p.description + "\n\n");
  s += "| criterion | kind | class | threshold | value | result | detail |\n|---|---|---|---|---|---|---|\n";
  int pass = 0, fail = 0, skip = 0;
  for (auto& r : rs) {
    (r.status == CriterionStatus::pass ? pass : r.status == CriterionStatus::fail ? fail : skip)++;
    s += "| " + r.c.name + " | " + r.c.kind + " | " + (r.c.cls.empty() ? "all" : r.c.cls) + " | " +
         fmt("%g", r.c.threshold) + " | " + fmt("%.4g", r.value) + " | " +
         (r.status == CriterionStatus::fail ? "**FAIL**" : to_string(r.status)) + " | " + r.detail + " |\n";
  }
  return s + "\n" + std::to_string(pass) + " PASS, " + std::to_string(fail) + " FAIL, " + std::to_string(skip) +
         " SKIP. The judged numbers are read from the run's check.json, bench.json and verdicts.json.\n\n";
}

}  // namespace sp
