#include "runner.hpp"

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <memory>

#include "heartbeat.hpp"
#include "measure_case.hpp"
#include "results.hpp"
#include "progress.hpp"
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
      heartbeat::Call hb(c.tech->info.name, "setup");
      tech_->setup(c.params, comm::size());
      current_ = &c;
    }
    return *tech_;
  }
  void release() {
    if (tech_) {
      heartbeat::Call hb(tech_->info().name, "teardown");
      tech_->teardown();
    }
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

// One announcement per (case, variant), at its first call: Google Benchmark
// calls the body again for every repetition and iteration-count trial.
struct BenchProgress {
  std::unique_ptr<Progress> bar;
  size_t announced = 0;
};

// Every timed loop of the run, by benchmark name, for bench.json.
std::map<std::string, std::vector<LoopTiming>>& loops() {
  static std::map<std::string, std::vector<LoopTiming>> l;
  return l;
}

BenchProgress& bench_progress() {
  static BenchProgress p;
  return p;
}

void body(benchmark::State& state, const Case* c, std::string variant, size_t index) {
  auto& progress = bench_progress();
  if (progress.bar && index > progress.announced) {
    progress.announced = index;
    progress.bar->start(index, c->tech->info.name + " " + variant + " " + c->params.label());
  }
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
  const std::string& name = c->tech->info.name;
  {
    heartbeat::Call hb(name, "run");
    t->run(variant);  // warm-up: first touch, caches, lazy library init
    Kokkos::fence();
  }
  std::vector<double> mine, slowest;
  PhaseClock clock;
  for (auto _ : state) {
    if (nranks > 1) comm::barrier();
    heartbeat::enter();  // outside the timed region: two increments per call
    const double seconds = clock.time("call", [&] {
      t->run(variant);
      Kokkos::fence();
    });
    heartbeat::leave();
    mine.push_back(seconds);
    slowest.push_back(nranks > 1 ? comm::max(seconds) : seconds);
    state.SetIterationTime(slowest.back());
  }
  LoopTiming loop = finish_loop(mine, std::move(slowest));
  const Counts k = t->counts(c->params, nranks);
  using C = benchmark::Counter;
  state.counters["FLOPS"] = C(k.flops, C::kIsIterationInvariantRate);  // 0 for pure data movement
  state.counters["flop"] = k.flops;
  state.counters["bytes"] = k.bytes();
  state.counters["AI"] = k.intensity();
  state.SetBytesProcessed(static_cast<int64_t>(k.bytes()) * state.iterations());
  state.counters["ranks"] = nranks;
  state.counters["threads"] = kx::concurrency();
  std::map<std::string, double> extra;
  timing_counters(loop, extra);
  t->report_counters(variant, extra);
  {
    heartbeat::Call hb(name, "probes");
    run_probes(*t, variant, extra);
  }
  loops()[bench_name(*c, variant)].push_back(std::move(loop));
  // Zero-valued counters are kept (a #wrong of 0 is a result); the NaN that
  // Google Benchmark's cv aggregate gives them is handled by read_json().
  for (auto& [name, value] : extra) state.counters[name] = value;
  state.SetLabel(c->params.label());
}

// Each benchmark entry of bench.json says what its variant is (the
// declaration's kind, and the vendor library it calls), so that a result
// names the implementation that ran without the reader knowing the suite.
void attach_variant_records(nlohmann::json& bench, const std::map<std::string, const Variant*>& records) {
  for (auto& b : bench["benchmarks"]) {
    auto it = records.find(bench_entry_case(b));
    if (it == records.end()) continue;
    b["variant_kind"] = to_string(it->second->kind);
    if (!it->second->library.empty()) b["library"] = it->second->library;
  }
}

}  // namespace

std::string bench_name(const Case& c, const std::string& variant) {
  return c.tech->info.family + "/" + c.tech->info.name + "/" + variant + "/" + c.params.label();
}

int run_benchmarks(const std::vector<Case>& cases, const BenchOptions& opt) {
  std::vector<std::string> args = {"scaleproof", "--benchmark_min_time=" + std::to_string(opt.min_time),
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
  heartbeat::start();
  for (auto& [k, v] : opt.context) benchmark::AddCustomContext(k, v);

  auto min_of = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  auto max_of = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
  size_t total = 0;
  for (auto& c : cases) total += c.variants.size();
  bench_progress() = {opt.progress ? std::make_unique<Progress>("bench", total) : nullptr, 0};
  size_t index = 0;
  std::map<std::string, const Variant*> records;
  for (auto& c : cases)
    for (auto& v : c.variants) {
      if (const Variant* d = c.tech->info.variant(v)) records[bench_name(c, v)] = d;
      benchmark::RegisterBenchmark(bench_name(c, v).c_str(), body, &c, v, ++index)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->ComputeStatistics("min", min_of)
          ->ComputeStatistics("max", max_of);
    }
  NullReporter quiet;
  // The technique a benchmark holds is torn down before this returns, also
  // when a benchmark throws: its Views must not outlive Kokkos::finalize.
  struct ReleaseActive {
    ~ReleaseActive() {
      try {
        active().release();
      } catch (...) {
      }
    }
  } release_active;
  size_t n = 0;
  if (root && opt.console)
    n = benchmark::RunSpecifiedBenchmarks();
  else
    n = benchmark::RunSpecifiedBenchmarks(&quiet);
  active().release();
  bench_progress() = {};
  benchmark::ClearRegisteredBenchmarks();
  if (root && !opt.json_out.empty()) {
    nlohmann::json bench = read_json(opt.json_out);  // a copy, with Google Benchmark's nan as null
    attach_samples(bench, loops());
    attach_variant_records(bench, records);
    write_file_atomic(opt.json_out, bench.dump(2) + "\n");
  }
  loops().clear();
  return static_cast<int>(n);
}

}  // namespace sp
