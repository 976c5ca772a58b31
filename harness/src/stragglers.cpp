#include "stragglers.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "measure_case.hpp"
#include "number_format.hpp"
#include "results.hpp"
#include "scaleproof/measure.hpp"

namespace fs = std::filesystem;

namespace sp {

namespace {

// A case name without its family (bench_entry_case() gives the name).
std::string case_key(const std::string& name) {
  const size_t slash = name.find('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);  // drop the family
}

}  // namespace

namespace {

// Per case, each rank's time: from the measurement service's "rank_seconds" (each rank's median time per
// call in one repetition), the median over the case's repetitions; from older files, the counters
// rank_s.<r> (each rank's mean time per call) of the median aggregate, else of the first repetition.
std::map<std::string, std::vector<double>> rank_times(const nlohmann::json& bench) {
  std::map<std::string, std::vector<std::vector<double>>> reps;  // case -> repetition -> rank -> seconds
  std::map<std::string, const nlohmann::json*> counters;
  for (auto& b : bench["benchmarks"]) {
    if (!b.is_object()) continue;
    const std::string key = case_key(bench_entry_case(b));
    if (b.contains("rank_seconds") && b["rank_seconds"].is_array()) {
      std::vector<double> t;
      for (auto& v : b["rank_seconds"]) t.push_back(v.is_number() ? v.get<double>() : NAN);
      reps[key].push_back(t);
    } else if (b.contains("rank_s.0") && (b.value("aggregate_name", "") == "median" || !counters.count(key))) {
      counters[key] = &b;
    }
  }
  std::map<std::string, std::vector<double>> out;
  for (auto& [key, b] : counters) {
    std::vector<double> t;
    for (int r = 0; b->contains("rank_s." + std::to_string(r)); ++r) {
      const auto& v = (*b)["rank_s." + std::to_string(r)];
      t.push_back(v.is_number() ? v.get<double>() : NAN);
    }
    out[key] = t;
  }
  for (auto& [key, rs] : reps) {
    const size_t ranks = rs.front().size();
    if (std::any_of(rs.begin(), rs.end(), [&](const std::vector<double>& t) { return t.size() != ranks; })) continue;
    std::vector<double> t(ranks);
    for (size_t r = 0; r < ranks; ++r) {
      std::vector<double> each;
      for (auto& rep : rs) each.push_back(rep[r]);
      t[r] = median(each);
    }
    out[key] = t;
  }
  return out;
}

}  // namespace

std::vector<RankSpread> rank_spreads(const nlohmann::json& bench, const nlohmann::json& manifest) {
  std::vector<std::string> hosts;
  if (manifest.is_object() && manifest.contains("rank_hosts") && manifest["rank_hosts"].is_array())
    for (auto& h : manifest["rank_hosts"]) hosts.push_back(h.is_string() ? h.get<std::string>() : "?");
  if (!bench.is_object() || !bench.contains("benchmarks") || !bench["benchmarks"].is_array()) return {};
  std::vector<RankSpread> out;
  for (auto& [key, t] : rank_times(bench)) {
    if (t.size() < 2 || std::any_of(t.begin(), t.end(), [](double x) { return !std::isfinite(x); })) continue;
    RankSpread s;
    s.key = key;
    s.ranks = static_cast<int>(t.size());
    s.slowest = static_cast<int>(std::max_element(t.begin(), t.end()) - t.begin());
    s.fastest = static_cast<int>(std::min_element(t.begin(), t.end()) - t.begin());
    s.slow_s = t[s.slowest], s.fast_s = t[s.fastest];
    std::vector<double> others;
    for (size_t r = 0; r < t.size(); ++r)
      if (static_cast<int>(r) != s.slowest) others.push_back(t[r]);
    s.others_median_s = median(others);
    s.excess = s.others_median_s > 0 ? s.slow_s / s.others_median_s - 1 : 0;
    auto host = [&](int r) { return r < static_cast<int>(hosts.size()) ? hosts[r] : std::string("?"); };
    s.slow_host = host(s.slowest), s.fast_host = host(s.fastest);
    out.push_back(s);
  }
  return out;
}

std::vector<RankSpread> rank_spreads_of(const std::string& dir) {
  const fs::path d(dir);
  if (!fs::exists(d / "bench.json")) return {};
  nlohmann::json manifest =
      fs::exists(d / "manifest.json") ? read_json((d / "manifest.json").string()) : nlohmann::json();
  // A main job's multi-rank cases ran in its launch: that part's manifest names their ranks' hosts.
  if (fs::exists(d / "job.json")) {
    const auto& job = read_json((d / "job.json").string());
    for (auto& l : job.value("launches", nlohmann::json::array()))
      if (l.is_object() && l.contains("manifest") && l["manifest"].is_object() && l["manifest"].contains("rank_hosts"))
        manifest = l["manifest"];
  }
  return rank_spreads(read_json((d / "bench.json").string()), manifest);
}

std::string ranks_markdown(const std::vector<RankSpread>& rows) {
  if (rows.empty()) return "";
  std::string s =
      "## Per-rank times (stragglers)\n\nEach rank's own time per call (its median per repetition, the median over "
      "repetitions); the benchmark's time is the slowest rank's. Excess: the slowest rank over the median of the "
      "others.\n\n";
  s += "| case | ranks | slowest rank (host) | time | fastest rank (host) | time | excess "
       "|\n|---|---|---|---|---|---|---|\n";
  for (auto& r : rows)
    s += "| " + r.key + " | " + std::to_string(r.ranks) + " | " + std::to_string(r.slowest) + " (" + r.slow_host +
         ") | " + si(r.slow_s, "s") + " | " + std::to_string(r.fastest) + " (" + r.fast_host + ") | " +
         si(r.fast_s, "s") + " | " + fmt("%.1f%%", 100 * r.excess) + " |\n";
  return s + "\n";
}

nlohmann::json ranks_json(const std::vector<RankSpread>& rows) {
  nlohmann::json a = nlohmann::json::array();
  for (auto& r : rows)
    a.push_back({{"case", r.key},
                 {"ranks", r.ranks},
                 {"slow", r.slowest},
                 {"slow_host", r.slow_host},
                 {"slow_s", r.slow_s},
                 {"fast", r.fastest},
                 {"fast_host", r.fast_host},
                 {"fast_s", r.fast_s},
                 {"excess", r.excess}});
  return a;
}

}  // namespace sp
