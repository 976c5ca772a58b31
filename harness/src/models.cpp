#include "models.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "measure_case.hpp"
#include "scaleproof/vendors.hpp"

namespace sp {

namespace {

double to_seconds(double t, const std::string& unit) {
  if (unit == "ns") return t * 1e-9;
  if (unit == "us") return t * 1e-6;
  if (unit == "ms") return t * 1e-3;
  return t;
}

// A case name "family/technique/variant/params" (params may be empty), as
// bench_entry_case() gives it.
bool split_name(const std::string& name, MeasuredCase& c) {
  std::vector<std::string> parts;
  size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    size_t slash = name.find('/', pos);
    if (slash == std::string::npos) return false;
    parts.push_back(name.substr(pos, slash - pos));
    pos = slash + 1;
  }
  c.family = parts[0];
  c.technique = parts[1];
  c.variant = parts[2];
  c.params = name.substr(pos);
  return true;
}

// JSON has no NaN: nlohmann writes a non-finite double as null, and
// read_json() maps Google Benchmark's bare nan/inf to null. Read those back
// as NaN instead of failing on them.
double number(const nlohmann::json& j, const char* key, double absent = 0.0) {
  if (!j.contains(key)) return absent;
  return j[key].is_number() ? j[key].get<double>() : NAN;
}

}  // namespace

std::vector<MeasuredCase> read_measurements(const nlohmann::json& bench) {
  // Prefer the median aggregate; fall back to a single run without repetitions.
  std::map<std::string, MeasuredCase> by_name;
  std::map<std::string, std::vector<double>> times;
  for (auto& b : bench.at("benchmarks")) {
    if (b.contains("error_occurred") && b["error_occurred"].get<bool>()) continue;
    MeasuredCase c;
    if (!split_name(bench_entry_case(b), c)) continue;
    const std::string run_name = c.family + "/" + c.technique + "/" + c.variant + "/" + c.params;
    // The cv aggregate of an all-zero time is NaN (null): nothing to read.
    const double t = to_seconds(number(b, "real_time", NAN), b.value("time_unit", "ns"));
    if (std::isnan(t)) continue;
    const std::string type = b.value("run_type", "iteration");
    const std::string agg = b.value("aggregate_name", "");
    if (type == "iteration") times[run_name].push_back(t);
    if (type == "iteration" ? by_name.count(run_name) == 0 : agg == "median") {
      c.m.seconds = t;
      for (auto& [k, v] : b.items())
        if (v.is_number() && k != "real_time" && k != "cpu_time" && k != "iterations" && k != "repetitions" &&
            k != "repetition_index" && k != "threads" && k != "family_index" && k != "per_family_instance_index")
          c.m.counters[k] = v.get<double>();
      c.m.ranks = static_cast<int>(c.m.counters.count("ranks") ? c.m.counters["ranks"] : 1);
      c.m.threads = static_cast<int>(c.m.counters.count("threads") ? c.m.counters["threads"] : 1);
      by_name[run_name] = c;
    }
  }
  std::vector<MeasuredCase> out;
  for (auto& [name, c] : by_name) {
    auto& ts = times[name];
    if (!ts.empty()) {
      c.min_s = *std::min_element(ts.begin(), ts.end());
      c.max_s = *std::max_element(ts.begin(), ts.end());
    }
    out.push_back(c);
  }
  return out;
}

Machine derive_machine(const std::vector<MeasuredCase>& cases) {
  // Best observed rate of each probe (STREAM reports the best rate too).
  Machine m;
  auto& reg = Registry::get();
  for (auto& c : cases) {
    auto* r = reg.find(c.technique);
    if (!r || r->info.roof_probe.empty() || c.variant != r->info.main_variant()) continue;
    const double t = c.min_s > 0 ? c.min_s : c.m.seconds;
    if (t <= 0) continue;
    if (r->info.roof_probe == "bandwidth") {
      m.bandwidth = std::max(m.bandwidth, c.m.counters.at("bytes") / t);
    } else if (r->info.roof_probe == "peak") {
      const std::string dtype = Params::parse(c.params).s_or("dtype", "fp64");
      m.peak[dtype] = std::max(m.peak[dtype], c.m.counters.at("flop") / t);
    }
  }
  return m;
}

bool band_cannot_fail(const Verdict& v) { return v.band_lo <= 0 && v.band_hi == INFINITY; }

void demote_unfailable(std::vector<Verdict>& vs) {
  for (auto& v : vs)
    if (v.status == Status::pass && band_cannot_fail(v)) {
      v.status = Status::info;
      v.note += std::string(v.note.empty() ? "" : "; ") + "band [" + std::to_string(v.band_lo).substr(0, 4) +
                ", inf] holds every value: reported, not judged";
    }
}

NotAtBest not_at_best(const nlohmann::json& manifest) {
  NotAtBest out;
  if (!manifest.contains("vendors") || !manifest["vendors"].is_object()) return out;
  for (auto& [lib, facts] : manifest["vendors"].items())
    if (facts.is_object() && facts.contains(kVendorNotAtBest) && facts[kVendorNotAtBest].is_string())
      out[lib] = facts[kVendorNotAtBest].get<std::string>();
  return out;
}

std::vector<Verdict> judge(const std::vector<MeasuredCase>& cases, const Machine& machine, const NotAtBest& weak) {
  std::vector<Verdict> out;
  auto& reg = Registry::get();
  for (auto& c : cases) {
    auto* r = reg.find(c.technique);
    if (!r) continue;  // results from a build that had other techniques
    auto t = r->make();
    t->predict(Params::parse(c.params), c.variant, c.m, machine, out);
    // Throughput against the declared vendor baseline at the same parameters:
    // the fastest of the baseline and its alternatives (the best the library offers).
    if (!r->info.baseline.empty() && c.variant == r->info.main_variant() && c.m.seconds > 0) {
      std::vector<std::string> ways{r->info.baseline};
      ways.insert(ways.end(), r->info.baseline_alternatives.begin(), r->info.baseline_alternatives.end());
      const auto is_way = [&](const std::string& v) { return std::find(ways.begin(), ways.end(), v) != ways.end(); };
      std::string vs, seen;  // the fastest way; every way measured
      double ratio = INFINITY;
      for (auto& b : cases)
        if (b.technique == c.technique && b.params == c.params && is_way(b.variant) && b.m.seconds > 0) {
          seen += (seen.empty() ? "" : ", ") + b.variant;
          if (b.m.seconds / c.m.seconds < ratio) ratio = b.m.seconds / c.m.seconds, vs = b.variant;
        }
      if (vs.empty()) continue;
      auto paired = c.m.counters.find(kPairedVsBaseline);
      const bool interleaved = paired != c.m.counters.end() && paired->second > 0;
      if (interleaved) {
        ratio = paired->second, vs = r->info.baseline;
        for (auto& w : ways) {
          auto it = c.m.counters.find(std::string(kPairedVsBaseline) + "." + w);
          if (it != c.m.counters.end() && it->second == paired->second) vs = w;
        }
      }
      Verdict v{c.technique, c.variant, c.params, "throughput vs " + r->info.baseline, "x"};
      v.predicted = 1.0;  // parity with the baseline
      v.measured = v.ratio = ratio;
      v.band_lo = r->info.tol.min_vs_baseline;
      v.band_hi = INFINITY;
      v.judge();
      // A multi-rank technique at one rank communicates nothing: its
      // comparison with the vendor's collective says nothing either.
      if (r->info.ranks.max > 1 && c.m.ranks == 1) v.status = Status::info;
      char buf[128];
      std::snprintf(buf, sizeof buf, "%.1f%% of %s (target >= %.0f%%)", 100 * v.measured, vs.c_str(), 100 * v.band_lo);
      v.note = buf;
      if (seen.find(',') != std::string::npos) v.note += "; the fastest of " + seen;
      if (interleaved) v.note += "; calls timed in turn";
      std::set<std::string> libraries;  // of the ways: one note per library
      for (auto& var : r->info.variants)
        if (is_way(var.name) && weak.count(var.library)) libraries.insert(var.library);
      for (auto& lib : libraries) {
        v.status = Status::info;
        v.note += "; " + lib + " not at its best (" + weak.at(lib) + "): reported, not judged";
      }
      out.push_back(v);
    }
  }
  demote_unfailable(out);
  return out;
}

nlohmann::json to_json(const Machine& m) { return {{"bandwidth_Bps", m.bandwidth}, {"peak_flops", m.peak}}; }

nlohmann::json to_json(const std::vector<Verdict>& vs) {
  nlohmann::json a = nlohmann::json::array();
  for (auto& v : vs)
    a.push_back({{"technique", v.technique},
                 {"variant", v.variant},
                 {"params", v.params},
                 {"quantity", v.quantity},
                 {"unit", v.unit},
                 {"predicted", v.predicted},
                 {"measured", v.measured},
                 {"ratio", v.ratio},
                 {"band_lo", v.band_lo},
                 {"band_hi", std::isinf(v.band_hi) ? nlohmann::json(nullptr) : nlohmann::json(v.band_hi)},
                 {"status", to_string(v.status)},
                 {"note", v.note}});
  return a;
}

std::vector<Verdict> verdicts_from_json(const nlohmann::json& j) {
  std::vector<Verdict> out;
  for (auto& e : j) {
    Verdict v;
    v.technique = e.at("technique");
    v.variant = e.at("variant");
    v.params = e.at("params");
    v.quantity = e.at("quantity");
    v.unit = e.value("unit", "");
    v.predicted = number(e, "predicted", NAN);
    v.measured = number(e, "measured", NAN);
    v.band_lo = number(e, "band_lo");
    v.ratio = number(e, "ratio");
    v.band_hi = e.contains("band_hi") && e["band_hi"].is_number() ? e["band_hi"].get<double>() : INFINITY;
    v.status = parse_status(e.at("status"));
    v.note = e.value("note", "");
    out.push_back(v);
  }
  return out;
}

}  // namespace sp
