#pragma once
// Benchmarks: every selected case and variant becomes a Google Benchmark with
// manual timing by the measurement service (fenced, max over ranks, so every
// rank takes the same iteration decisions), FLOP/s and bytes/s counters,
// min/max statistics over repetitions and, per repetition, the statistics of
// its iterations and the rank imbalance (measure_case.hpp). The technique's
// probes run after its timed loop; bench.json keeps every iteration's time
// and every rank's.
#include <map>
#include <string>
#include <vector>

#include "selection.hpp"

namespace sp {

struct BenchOptions {
  double min_time = 0.2;  // seconds per repetition (Google Benchmark's min_time)
  int repetitions = 3;
  std::string json_out;                        // file to write (rank 0 only); empty = none
  std::string filter;                          // extra --benchmark_filter regex
  std::map<std::string, std::string> context;  // manifest keys echoed into the JSON context
  bool console = true;
  bool progress = false;  // announce each case and variant with elapsed and estimated time left
};

// Benchmark name: family/technique/variant/params (parsed back by models.cpp).
std::string bench_name(const Case& c, const std::string& variant);
int run_benchmarks(const std::vector<Case>& cases, const BenchOptions& opt);

}  // namespace sp
