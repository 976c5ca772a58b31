#pragma once
// Per-rank times of multi-rank benchmarks: each rank's own time per call
// (bench.json "rank_seconds" of each repetition, the median over
// repetitions; older files: the counters rank_s.<r>) and the host of each
// rank (manifest.json rank_hosts). A straggler is a rank whose
// time exceeds the median of the other ranks' times by a declared fraction.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sp {

struct RankSpread {
  std::string key;  // technique/variant/params
  int ranks = 0, slowest = 0, fastest = 0;
  double slow_s = 0, fast_s = 0;
  double others_median_s = 0;  // median time of every rank but the slowest
  double excess = 0;           // slow_s / others_median_s - 1
  std::string slow_host, fast_host;
};

// One row per multi-rank case that carries per-rank times.
std::vector<RankSpread> rank_spreads(const nlohmann::json& bench, const nlohmann::json& manifest);
// The Markdown section of the report ("" when no case has per-rank times).
std::string ranks_markdown(const std::vector<RankSpread>& rows);
// The same rows as JSON (ranks.json, which the HTML report reads): case,
// ranks, slow, slow_host, slow_s, fast, fast_host, fast_s, excess.
nlohmann::json ranks_json(const std::vector<RankSpread>& rows);
// Reads bench.json and manifest.json of a results folder (those present).
std::vector<RankSpread> rank_spreads_of(const std::string& results_dir);

}  // namespace sp
