#pragma once
// The measurement service's side in the runner: statistics of a case's
// timed loop, the probes a technique declares, and the samples kept in the
// results (bench.json).
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scaleproof/measure.hpp"
#include "scaleproof/technique.hpp"

namespace sp {

// One run of a case's timed loop (one Google Benchmark repetition or trial).
struct LoopTiming {
  std::vector<double> iteration_seconds;  // per iteration, the slowest rank's
  std::vector<double> rank_seconds;       // per rank (by rank), its median iteration
  TimeStats stats;                        // of iteration_seconds
  double imbalance = 1;                   // of rank_seconds
};

// Collective: `mine` is this rank's time of each iteration, `slowest` the
// slowest rank's. Gathers every rank's median.
LoopTiming finish_loop(const std::vector<double>& mine, std::vector<double> slowest);
// Counters t_min_s, t_median_s, t_p90_s, t_p99_s, t_max_s, rank_imbalance.
void timing_counters(const LoopTiming& t, std::map<std::string, double>& out);

// Runs and times the technique's declared probes for `variant`, writing each
// probe's counter into `out`. Collective over ranks. Throws std::logic_error for a
// probe that names no call, fewer than one sample, more than two calls
// without `each`, or an `each` that does not name every call.
void run_probes(Technique& t, const std::string& variant, std::map<std::string, double>& out);
// The counters of one probe from its timed calls (t[k][i]).
void probe_counters(const Probe& p, const std::vector<std::vector<double>>& t, std::map<std::string, double>& out);

// The most iteration times bench.json keeps per run. The statistics are
// over every iteration; a loop of microsecond calls runs hundreds of
// thousands of them, and the file must stay small enough to read back.
inline constexpr size_t kKeptIterations = 1000;
// Every `stride`-th element of `all` from the first, with the smallest
// stride that keeps at most `most` (stride 1: all of them). Evenly spaced
// in the order they ran, so a drift over the loop stays visible.
std::vector<double> thin_samples(const std::vector<double>& all, size_t most, size_t& stride);

// Adds each reported benchmark's samples to a Google Benchmark JSON
// document: "iteration_seconds" (thinned as thin_samples does, with
// "iteration_seconds_stride") and "rank_seconds". `loops[name]` holds the
// timed loops of that benchmark in the order they ran (trials included);
// a reported run takes the next loop, in order, with its iteration count.
void attach_samples(nlohmann::json& bench, const std::map<std::string, std::vector<LoopTiming>>& loops);
// A bench.json entry's case name as the runner registered it (bench_name):
// its run_name (or name) without the "/manual_time" Google Benchmark appends.
std::string bench_entry_case(const nlohmann::json& entry);

}  // namespace sp
