// The measurement service: statistics on known inputs, the order of calls
// taken in turn, the probe mechanism (a technique declares, the service runs
// and times), and the fields it adds to bench.json.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <unistd.h>

#include "measure_case.hpp"
#include "models.hpp"
#include "results.hpp"
#include "runner.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/measure.hpp"
#include "scaleproof/registry.hpp"

namespace fs = std::filesystem;

TEST(MeasureStats, PercentilesInterpolateBetweenClosestRanks) {
  // Position q (n - 1) on 1..5: p90 at 3.6 -> 4.6, p99 at 3.96 -> 4.96.
  const sp::TimeStats s = sp::summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.n, 5u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.p90, 4.6);
  EXPECT_DOUBLE_EQ(s.p99, 4.96);
  EXPECT_EQ(s.max, 5);
  EXPECT_EQ(s.mean, 3);
  // Even count: the median is the mean of the middle two.
  EXPECT_EQ(sp::summarize({4, 1, 3, 2}).median, 2.5);
  // One value: every statistic is that value.
  const sp::TimeStats one = sp::summarize({7});
  EXPECT_EQ(one.min, 7);
  EXPECT_EQ(one.p99, 7);
  EXPECT_EQ(one.max, 7);
  EXPECT_EQ(sp::summarize({}).n, 0u);
  // A single outlier among 100 moves p99 and max, not the median or p90.
  std::vector<double> v(99, 1.0);
  v.push_back(100.0);
  const sp::TimeStats o = sp::summarize(v);
  EXPECT_EQ(o.median, 1);
  EXPECT_EQ(o.p90, 1);
  // Position 98.01: 1 + 0.01 (100 - 1). The position q (n - 1) and the
  // fraction pos - 98 each carry one rounding (relative u of 98.01), scaled
  // by the gap 99: |error| <= 2 u 98.01 x 99.
  EXPECT_NEAR(o.p99, 1.99, 2 * sp::unit_roundoff<double>() * 98.01 * 99);
  EXPECT_EQ(o.max, 100);
}

TEST(MeasureStats, ImbalanceIsSlowestOverFastest) {
  EXPECT_EQ(sp::imbalance({2.0, 3.0, 6.0}), 3.0);
  EXPECT_EQ(sp::imbalance({4.0, 4.0}), 1.0);
  EXPECT_EQ(sp::imbalance({5.0}), 1.0);
  EXPECT_EQ(sp::imbalance({}), 1.0);
  EXPECT_TRUE(std::isinf(sp::imbalance({0.0, 1.0})));
  EXPECT_EQ(sp::imbalance({0.0, 0.0}), 1.0);
}

TEST(MeasureInterleave, CallsTakeTurnsWithSettleAndAfterSteps) {
  std::vector<std::pair<size_t, sp::TurnStep>> log;
  sp::TurnSchedule s;
  s.warmup = 1, s.settle = 2, s.samples = 2, s.after = true;
  const auto t = sp::interleave(2, s, [&](size_t k, sp::TurnStep st) { log.push_back({k, st}); });
  using S = sp::TurnStep;
  const std::vector<std::pair<size_t, S>> want = {
      {0, S::warmup}, {1, S::warmup},                                // warm-up, each once
      {0, S::settle}, {0, S::settle}, {0, S::timed}, {0, S::after},  // sample 0
      {1, S::settle}, {1, S::settle}, {1, S::timed}, {1, S::after},
      {0, S::settle}, {0, S::settle}, {0, S::timed}, {0, S::after},  // sample 1
      {1, S::settle}, {1, S::settle}, {1, S::timed}, {1, S::after}};
  EXPECT_EQ(log, want);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].size(), 2u);
  EXPECT_EQ(t[1].size(), 2u);
}

TEST(MeasureInterleave, ProbeCountersFromTheTimedCalls) {
  const std::vector<std::vector<double>> t = {{1, 2, 9}, {4, 6, 5}};
  std::map<std::string, double> out;
  sp::Probe p{"x", {"a", "b"}};
  sp::probe_counters(p, t, out);
  EXPECT_EQ(out.at("x"), 2.5);  // medians 5 over 2
  p.stat = sp::Probe::Stat::min;
  sp::probe_counters(p, t, out);
  EXPECT_EQ(out.at("x"), 4.0);  // fastest 4 over 1
  sp::Probe alone{"y", {"a"}};
  sp::probe_counters(alone, {{3, 1, 2}}, out);
  EXPECT_EQ(out.at("y"), 2.0);
  sp::Probe each{"", {"a", "b"}};
  each.each = {"t_a", "t_b"};
  sp::probe_counters(each, t, out);
  EXPECT_EQ(out.at("t_a"), 2.0);
  EXPECT_EQ(out.at("t_b"), 5.0);
  EXPECT_EQ(out.count(""), 0u);
  // More than two calls: each later call's ratio, and the smallest of them.
  sp::Probe three{"z", {"a", "b", "c"}};
  sp::probe_counters(three, {{1, 2, 9}, {4, 6, 5}, {3, 3, 3}}, out);
  EXPECT_EQ(out.at("z.b"), 2.5);  // medians 5 over 2
  EXPECT_EQ(out.at("z.c"), 1.5);  // 3 over 2
  EXPECT_EQ(out.at("z"), 1.5);    // against the faster of b and c
  EXPECT_EQ(out.count("z.a"), 0u);
}

namespace {

// Test-only: declares two probes and never reads a clock. It records the
// calls the service makes and what the service hands back.
class ProbeTech : public sp::Technique {
 public:
  ProbeTech() : Technique(describe()) {}
  static sp::Info describe() {
    sp::Info i;
    i.name = "probe_test";
    i.family = "testonly";
    i.variants = {sp::Variant::kernel("main"), sp::Variant::kernel("other")};
    i.param_sets = {{sp::Size::small, {{"n", "1"}}}};
    i.test_only = true;
    return i;
  }
  sp::Counts counts(const sp::Params&, int) const override { return {}; }
  void setup(const sp::Params&, int) override {}
  void run(const std::string& v) override { ++runs[v]; }
  sp::CheckResult check(const std::string&) override { return {}; }
  std::vector<sp::Probe> probes(const std::string& variant) const override {
    if (variant != "main") return {};
    sp::Probe vs{"main_vs_other", {"main", "other"}, "sample", 3, 1};
    sp::Probe alone{"t_alone_s", {"other"}};
    alone.samples = 2;
    return {vs, alone};
  }
  void run_probe(const std::string& call) override { probe_calls.push_back(call); }
  void probes_done(const std::string&, std::map<std::string, double>& out) override {
    seen_in_done = out.count("main_vs_other") && out.count("t_alone_s");
  }
  std::map<std::string, int> runs;
  std::vector<std::string> probe_calls;
  bool seen_in_done = false;
};

}  // namespace

TEST(MeasureProbe, ServiceRunsTheDeclaredProbesAndWritesTheirCounters) {
  ProbeTech t;
  std::map<std::string, double> out;
  sp::run_probes(t, "main", out);
  // 3 samples in turn: settle, timed, after for main; the same for other.
  std::vector<std::string> want;
  for (int i = 0; i < 3; ++i)
    for (const char* c : {"main", "other"}) want.insert(want.end(), {c, c, "sample"});
  want.insert(want.end(), {"other", "other"});  // the second probe: two timed calls, no settle
  EXPECT_EQ(t.probe_calls, want);
  EXPECT_TRUE(out.count("main_vs_other"));
  ASSERT_TRUE(out.count("t_alone_s"));
  EXPECT_GE(out["t_alone_s"], 0);
  EXPECT_TRUE(t.seen_in_done);
  EXPECT_TRUE(t.runs.empty());  // probes go through run_probe(), not run()
  std::map<std::string, double> none;
  sp::run_probes(t, "other", none);
  EXPECT_TRUE(none.empty());
}

TEST(MeasureProbe, MalformedProbeIsAProgramFault) {
  struct Bad : ProbeTech {
    std::vector<sp::Probe> probes(const std::string&) const override { return {sp::Probe{"none", {}}}; }
  } t;
  std::map<std::string, double> out;
  EXPECT_THROW(sp::run_probes(t, "main", out), std::logic_error);
}

TEST(MeasureProbe, PhaseProbeReadsOnlyWhatTheCallRecordsUnderThePhase) {
  // Call "a" records its work under phase "part", call "b" records nothing
  // there: b's phase time is exactly 0 whatever its whole call took.
  struct Phased : ProbeTech {
    std::vector<sp::Probe> probes(const std::string&) const override {
      sp::Probe p{"", {"a", "b"}};
      p.samples = 3;
      p.each = {"t_a", "t_b"};
      p.phase = "part";
      return {p};
    }
    void run_probe(const std::string& call) override {
      if (call == "a")
        clock.time("part", [] {});
      else
        clock.time("other", [] {});
    }
    const sp::PhaseClock* phase_clock() const override { return &clock; }
    sp::PhaseClock clock;
  } t;
  std::map<std::string, double> out;
  sp::run_probes(t, "main", out);
  EXPECT_EQ(out.at("t_b"), 0.0);
  EXPECT_GE(out.at("t_a"), 0.0);
  EXPECT_EQ(t.clock.count("part"), 3);
  EXPECT_EQ(t.clock.count("other"), 3);
  struct NoClock : Phased {
    const sp::PhaseClock* phase_clock() const override { return nullptr; }
  } none;
  EXPECT_THROW(sp::run_probes(none, "main", out), std::logic_error);
}

TEST(MeasureResults, ThinnedSamplesAreEvenlySpacedFromTheFirst) {
  std::vector<double> all(2500);
  for (size_t i = 0; i < all.size(); ++i) all[i] = double(i);
  size_t stride = 0;
  const auto kept = sp::thin_samples(all, 1000, stride);
  EXPECT_EQ(stride, 3u);  // 2 would keep 1250
  ASSERT_EQ(kept.size(), 834u);
  for (size_t k = 0; k < kept.size(); ++k) EXPECT_EQ(kept[k], double(3 * k));
  // At or under the limit every sample is kept.
  EXPECT_EQ(sp::thin_samples(std::vector<double>(1000, 1.0), 1000, stride).size(), 1000u);
  EXPECT_EQ(stride, 1u);
  EXPECT_EQ(sp::thin_samples(std::vector<double>(1001, 1.0), 1000, stride).size(), 501u);
  EXPECT_EQ(stride, 2u);
}

TEST(MeasureResults, BenchJsonCarriesCallStatisticsRanksAndSamples) {
  sp::Registered reg{[] { return std::unique_ptr<sp::Technique>(new ProbeTech()); }, ProbeTech::describe()};
  std::vector<sp::Case> cases(1);
  cases[0].tech = &reg;
  cases[0].size = sp::Size::small;
  cases[0].params = reg.info.param_sets[0].params;
  cases[0].variants = {"main", "other"};
  const fs::path file = fs::temp_directory_path() / ("sp_test_measure_" + std::to_string(::getpid()) + ".json");
  sp::BenchOptions o;
  o.min_time = 0.001;
  o.repetitions = 2;
  o.json_out = file.string();
  o.console = false;
  ASSERT_EQ(sp::run_benchmarks(cases, o), 2);
  if (sp::comm::rank() != 0) return;  // rank 0 writes bench.json
  const nlohmann::json& bench = sp::read_json(file.string());
  int reported = 0;
  for (auto& b : bench.at("benchmarks")) {
    if (b.value("run_type", "") != "iteration") continue;
    ++reported;
    for (const char* k : {"t_min_s", "t_median_s", "t_p90_s", "t_p99_s", "t_max_s", "rank_imbalance"})
      EXPECT_TRUE(b.contains(k) && b[k].is_number()) << k;
    EXPECT_LE(b["t_min_s"].get<double>(), b["t_median_s"].get<double>());
    EXPECT_LE(b["t_median_s"].get<double>(), b["t_p90_s"].get<double>());
    EXPECT_LE(b["t_p90_s"].get<double>(), b["t_p99_s"].get<double>());
    EXPECT_LE(b["t_p99_s"].get<double>(), b["t_max_s"].get<double>());
    ASSERT_TRUE(b.contains("iteration_seconds"));
    const size_t stride = b.at("iteration_seconds_stride").get<size_t>(), n = b["iterations"].get<size_t>();
    EXPECT_EQ(b["iteration_seconds"].size(), (n + stride - 1) / stride);
    EXPECT_LE(b["iteration_seconds"].size(), sp::kKeptIterations);
    ASSERT_TRUE(b.contains("rank_seconds"));
    EXPECT_EQ(b["rank_seconds"].size(), static_cast<size_t>(sp::comm::size()));
    // The main variant's probes are counters of its case.
    const bool main = b["name"].get<std::string>().find("/main/") != std::string::npos;
    EXPECT_EQ(b.contains("main_vs_other"), main);
  }
  EXPECT_EQ(reported, 4);  // 2 variants x 2 repetitions
  // The models read them back as counters of the case.
  for (auto& c : sp::read_measurements(bench)) EXPECT_TRUE(c.m.counters.count("rank_imbalance"));
  fs::remove(file);
}
