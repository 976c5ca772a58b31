#include "runner.hpp"

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <memory>

#include "scaleproof/comm.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp {

namespace {

// Google Benchmark calls a benchmark function once per repetition (and per
// iteration-count trial). Setting a case up each time would dominate the run,
// so one case at a time stays set up and is torn down when the next begins.
class ActiveCase {
 public:
  Technique& get(const Case& c) {
    if (current_ != &c) {
      release();
      tech_ = c.tech->make();
      tech_->setup(c.params, comm::size());
      current_ = &c;
    }
    return *tech_;
  }
  void release() {
    if (tech_) tech_->teardown();
    tech_.reset();
    current_ = nullptr;
  }

 private:
  const Case* current_ = nullptr;
  std::unique_ptr<Technique> tech_;
};

ActiveCase& active() {
  static ActiveCase a;
  return a;
}

class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

void body(benchmark::State& state, const Case* c, std::string variant) {
  Technique* t = nullptr;
  try {
    t = &active().get(*c);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    for (auto _ : state) {
    }
    return;
  }
  const int nranks = comm::size();
  t->run(variant);  // warm-up: first touch, caches, lazy library init
  Kokkos::fence();
  for (auto _ : state) {
    if (nranks > 1) comm::barrier();
    Kokkos::Timer timer;
    t->run(variant);
    Kokkos::fence();
    state.SetIterationTime(comm::max(timer.seconds()));
  }
  const Counts k = t->counts(c->params, nranks);
  using C = benchmark::Counter;
  state.counters["FLOPS"] = C(k.flops, C::kIsIterationInvariantRate);  // 0 for pure data movement
  state.counters["flop"] = k.flops;
  state.counters["bytes"] = k.bytes();
  state.counters["AI"] = k.intensity();
  state.counters["ranks"] = nranks;
  state.counters["threads"] = kx::concurrency();
  state.SetBytesProcessed(static_cast<int64_t>(k.bytes()) * state.iterations());
  std::map<std::string, double> extra;
  t->report_counters(variant, extra);
  for (auto& [name, value] : extra) state.counters[name] = value;
  state.SetLabel(c->params.label());
}

}  // namespace

std::string bench_name(const Case& c, const std::string& variant) {
  return c.tech->info.family + "/" + c.tech->info.name + "/" + variant + "/" + c.params.label();
}

int run_benchmarks(const std::vector<Case>& cases, const BenchOptions& opt) {
  std::vector<std::string> args = {"scaleproof",
                                   "--benchmark_min_time=" + std::to_string(opt.min_time),
                                   "--benchmark_repetitions=" + std::to_string(opt.repetitions)};
  const bool root = comm::rank() == 0;
  if (root && !opt.json_out.empty()) {
    args.push_back("--benchmark_out=" + opt.json_out);
    args.push_back("--benchmark_out_format=json");
  }
  if (!opt.filter.empty()) args.push_back("--benchmark_filter=" + opt.filter);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  for (auto& [k, v] : opt.context) benchmark::AddCustomContext(k, v);

  auto min_of = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  auto max_of = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
  for (auto& c : cases)
    for (auto& v : c.variants) {
      benchmark::RegisterBenchmark(bench_name(c, v).c_str(), body, &c, v)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->ComputeStatistics("min", min_of)
          ->ComputeStatistics("max", max_of);
    }
  NullReporter quiet;
  size_t n = 0;
  if (root && opt.console) n = benchmark::RunSpecifiedBenchmarks();
  else n = benchmark::RunSpecifiedBenchmarks(&quiet);
  active().release();
  benchmark::ClearRegisteredBenchmarks();
  return static_cast<int>(n);
}

}  // namespace sp
