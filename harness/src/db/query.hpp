#pragma once
// Reading the results database back: runs by filter, one case's timings
// over runs, and one run's timings per case (for compare).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "db/db.hpp"

namespace sp::db {

struct RunFilter {
  std::string technique, variant, params, machine, commit, kind;
  std::string since, until;  // YYYY-MM-DD, inclusive
};

struct RunRow {
  std::int64_t id = 0;
  std::string name, path, kind, machine, commit, date;
  int ranks = 1;
  int cases = 0;  // cases matching the filter's technique/variant/params
};

std::vector<RunRow> list_runs(Database& d, const RunFilter& f);

// A case's time in one run: the median over its repetitions (or the run's
// median aggregate when it kept no repetitions), with their min and max.
// With the measurement service's per-call statistics (calls): the median
// over repetitions of each one's median call, the fastest call of any
// repetition and the highest 90th percentile of any repetition.
struct Timing {
  double median = 0, min = 0, max = 0;
  int n = 0;  // repetitions behind it (0: an aggregate or a single figure)
  bool calls = false;
  double call_median = 0, call_min = 0, call_p90 = 0;
};

struct TrendPoint {
  RunRow run;
  Timing t;
};

// technique/variant/params over every run holding it (oldest first), on
// `machine` when given, within the filter's dates.
std::vector<TrendPoint> case_trend(Database& d, const std::string& technique, const std::string& variant,
                                   const std::string& params, const RunFilter& f);

// Every benchmark case measured on any of `machines`: "technique/variant/params"
// -> one timing per run holding it.
std::map<std::string, std::vector<Timing>> bench_timings(Database& d, const std::vector<std::string>& machines);

// Every case of one run: "technique/variant/params" -> its timing.
// Throws InputError when the run does not exist.
std::map<std::string, Timing> run_timings(Database& d, std::int64_t run_id);

}  // namespace sp::db
