// The models stage judges crafted Google Benchmark JSON: roofs are derived
// from the probes, verdicts follow the declared bands.
#include <gtest/gtest.h>

#include <cmath>

#include "scaleproof/host.hpp"
#include "models.hpp"

namespace {

nlohmann::json entry(const std::string& name, double us, double flop, double bytes, const char* type = "iteration",
                     const char* agg = "") {
  nlohmann::json e = {{"name", name}, {"run_name", name}, {"run_type", type}, {"real_time", us}, {"time_unit", "us"},
                      {"flop", flop}, {"bytes", bytes},   {"ranks", 1},       {"threads", 2}};
  if (*agg) e["aggregate_name"] = agg;
  return e;
}

}  // namespace

TEST(Models, ReadsMedianAndMinMax) {
  nlohmann::json j = {{"benchmarks",
                       {entry("roofline/stream_triad/kokkos/N=1000/manual_time", 10, 0, 24000),
                        entry("roofline/stream_triad/kokkos/N=1000", 8, 0, 24000),
                        entry("roofline/stream_triad/kokkos/N=1000", 9, 0, 24000, "aggregate", "median"),
                        entry("roofline/stream_triad/kokkos/N=1000", 9.5, 0, 24000, "aggregate", "mean")}}};
  auto m = sp::read_measurements(j);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].technique, "stream_triad");
  EXPECT_EQ(m[0].params, "N=1000");
  EXPECT_DOUBLE_EQ(m[0].m.seconds, 9e-6);
  EXPECT_DOUBLE_EQ(m[0].min_s, 8e-6);
  EXPECT_DOUBLE_EQ(m[0].max_s, 10e-6);
}

TEST(Models, RoofsFromProbesAndRooflineVerdict) {
  // Bandwidth 24000 B / 8 us = 3 GB/s; fp64 peak 1e6 FLOP / 1 us = 1 TFLOP/s... scaled down below.
  nlohmann::json j = {{"benchmarks",
                       {entry("roofline/stream_triad/kokkos/N=1000", 8, 0, 24000),
                        entry("roofline/fma_peak/kokkos/dtype=fp64,items=1,iters=1", 1000, 1e6, 8),
                        // gemm: 2e6 FLOP, 1e6 bytes: AI 2 FLOP/B -> memory roof 6e9 FLOP/s > peak 1e9:
                        // compute-bound; roof time 2e6/1e9 = 2 ms. Measured 4 ms: 50% of roof.
                        entry("gemm/gemm/kokkos/dtype=fp64,M=100,N=100,K=100", 4000, 2e6, 1e6)}}};
  auto cases = sp::read_measurements(j);
  sp::Machine mach = sp::derive_machine(cases);
  EXPECT_NEAR(mach.bandwidth, 3e9, 1);
  EXPECT_NEAR(mach.peak_for("fp64"), 1e9, 1);
  auto verdicts = sp::judge(cases, mach);
  const sp::Verdict* g = nullptr;
  for (auto& v : verdicts)
    if (v.technique == "gemm" && v.quantity == "roofline time") g = &v;
  ASSERT_NE(g, nullptr);
  // The verdict uses the technique's own counts (2 M N K at M=N=K=100 -> 2e6).
  EXPECT_NEAR(g->predicted, 2e-3, 1e-9);
  EXPECT_NEAR(g->ratio, 0.5, 1e-9);
  EXPECT_EQ(g->status, sp::Status::pass);  // gemm declares roof_min 0.25
}

// STREAM's rule: arrays under 4x the reported last-level cache measure a
// cache, so a STREAM kernel's roofline verdict is INFO; at 4x it is judged.
TEST(Models, AStreamRunUnderFourTimesTheCacheIsNotJudged) {
  const double llc = sp::reported_last_level_cache_bytes();
  if (!(llc > 0)) GTEST_SKIP() << "the C library reports no cache size here";
  for (const long long n : {1000LL, static_cast<long long>(std::ceil(4 * llc / 8))}) {
    const std::string at = "/kokkos/N=" + std::to_string(n);
    // Copy moves 16 B per element at the triad's 24: at the same time, 2/3 of the roof.
    auto cases = sp::read_measurements(
        {{"benchmarks",
          {entry("roofline/stream_triad" + at, 8, 0, 24.0 * n), entry("roofline/stream_copy" + at, 8, 0, 16.0 * n)}}});
    const bool resident = 8.0 * n < 4 * llc;
    int copy = 0;
    for (auto& v : sp::judge(cases, sp::derive_machine(cases)))
      if (v.technique == "stream_copy" && v.quantity == "roofline time") {
        ++copy;
        EXPECT_EQ(v.note.find("cache-resident") != std::string::npos, resident) << n;
        EXPECT_EQ(v.status, resident ? sp::Status::info : sp::Status::pass) << n;
      }
    EXPECT_EQ(copy, 1) << n;
  }
}

// The same rule for every technique's roofline verdict: a memory-bound case
// whose bytes are under 4x the last-level cache is reported, not judged; at
// 4x, and for a compute-bound case of any size, the band decides.
TEST(Models, AMemoryBoundCaseUnderFourTimesTheCacheIsNotJudged) {
  const double llc = sp::reported_last_level_cache_bytes();
  if (!(llc > 0)) GTEST_SKIP() << "the C library reports no cache size here";
  sp::Info info;
  info.name = "t";
  info.tol.roof_min = 0.5;
  sp::Machine mach;
  mach.bandwidth = 1e9;
  mach.peak["fp64"] = 1e9;
  const auto verdict = [&](double flops, double bytes, double seconds) {
    sp::Counts c;
    c.flops = flops, c.bytes_read = bytes;
    sp::Measurement m;
    m.seconds = seconds;
    auto v = sp::roofline_verdict(info, "v", sp::Params{}, c, m, mach, true);
    EXPECT_TRUE(v.has_value());
    return v.value_or(sp::Verdict{});
  };
  // Memory-bound at 25% of the roof (band [0.5, 1.15]): INFO under 4x LLC, FAIL at 4x.
  const double small = llc, big = 4 * llc;
  EXPECT_EQ(verdict(0, small, 4 * small / 1e9).status, sp::Status::info);
  EXPECT_NE(verdict(0, small, 4 * small / 1e9).note.find("cache-resident"), std::string::npos);
  EXPECT_EQ(verdict(0, big, 4 * big / 1e9).status, sp::Status::fail);
  EXPECT_EQ(verdict(0, big, big / 1e9).status, sp::Status::pass);
  // Compute-bound (AI 100) on the same small data: judged.
  EXPECT_EQ(verdict(100 * small, small, 4 * small).status, sp::Status::fail);
  EXPECT_EQ(verdict(100 * small, small, 100 * small / 1e9).status, sp::Status::pass);
  // Not judged on request: INFO without the cache note.
  sp::Counts c;
  c.bytes_read = big;
  sp::Measurement m;
  m.seconds = big / 1e9;
  auto v = sp::roofline_verdict(info, "v", sp::Params{}, c, m, mach, false);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->status, sp::Status::info);
  EXPECT_EQ(v->note.find("cache-resident"), std::string::npos);
}

TEST(Models, FasterThanTheRoofFails) {
  nlohmann::json j = {{"benchmarks",
                       {entry("roofline/stream_triad/kokkos/N=1000", 8, 0, 24000),
                        entry("roofline/fma_peak/kokkos/dtype=fp64,items=1,iters=1", 1000, 1e6, 8),
                        entry("gemm/gemm/kokkos/dtype=fp64,M=100,N=100,K=100", 1000, 2e6, 1e6)}}};
  auto cases = sp::read_measurements(j);
  auto verdicts = sp::judge(cases, sp::derive_machine(cases));
  bool found = false;
  for (auto& v : verdicts)
    if (v.technique == "gemm" && v.quantity == "roofline time") {
      found = true;
      EXPECT_NEAR(v.ratio, 2.0, 1e-9);
      EXPECT_EQ(v.status, sp::Status::fail);  // 200% of the roof: the counts or the roofs are wrong
    }
  EXPECT_TRUE(found);
}

// A baseline whose library a user's setting kept from its best
// implementation (vendor fact kVendorNotAtBest) gives a ratio that is not a
// result: the verdict is INFO with the reason, and PASS or FAIL otherwise.
TEST(Models, BaselineNotAtItsBestIsReportedNotJudged) {
  const auto* gemm = sp::Registry::get().find("gemm");
  ASSERT_NE(gemm, nullptr);
  const std::string base = gemm->info.baseline;
  if (base.empty()) GTEST_SKIP() << "no vendor GEMM in this build";
  std::string lib;
  for (auto& v : gemm->info.variants)
    if (v.name == base) lib = v.library;
  for (double vendor_us : {2000.0, 500.0}) {  // the kernel at 2x and at 0.5x the baseline
    nlohmann::json j = {{"benchmarks",
                         {entry("gemm/gemm/kokkos/dtype=fp64,M=100,N=100,K=100", 1000, 2e6, 1e6),
                          entry("gemm/gemm/" + base + "/dtype=fp64,M=100,N=100,K=100", vendor_us, 2e6, 1e6)}}};
    auto cases = sp::read_measurements(j);
    const nlohmann::json manifest = {{"vendors", {{lib, {{"core", "Old"}, {"not_at_best", "core Old runs"}}}}}};
    const sp::NotAtBest weak = sp::not_at_best(manifest);
    ASSERT_EQ(weak.size(), 1u);
    EXPECT_EQ(weak.at(lib), "core Old runs");
    auto find = [&](const std::vector<sp::Verdict>& vs) {
      for (auto& v : vs)
        if (v.quantity == "throughput vs " + base) return v;
      ADD_FAILURE() << "no throughput verdict";
      return sp::Verdict{};
    };
    const sp::Verdict judged = find(sp::judge(cases, sp::derive_machine(cases)));
    EXPECT_EQ(judged.status, vendor_us > 1000 ? sp::Status::pass : sp::Status::fail);
    const sp::Verdict weak_v = find(sp::judge(cases, sp::derive_machine(cases), weak));
    EXPECT_EQ(weak_v.status, sp::Status::info);
    EXPECT_NE(weak_v.note.find(lib + " not at its best (core Old runs)"), std::string::npos) << weak_v.note;
    EXPECT_DOUBLE_EQ(weak_v.ratio, judged.ratio);
  }
  EXPECT_TRUE(sp::not_at_best(nlohmann::json{{"vendors", {{lib, {{"core", "Best"}}}}}}).empty());
}

TEST(Models, NonFiniteValuesReadBackAsNaN) {
  // A verdict whose prediction is NaN is written as null (JSON has no NaN) and
  // must read back, not abort the report; a null cv time is skipped.
  sp::Verdict v{"gemm", "kokkos", "M=1", "q", "s", NAN, 1.0, NAN, 0.5, INFINITY, sp::Status::info, ""};
  auto back = sp::verdicts_from_json(sp::to_json(std::vector<sp::Verdict>{v}));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_TRUE(std::isnan(back[0].predicted));
  EXPECT_TRUE(std::isnan(back[0].ratio));
  EXPECT_TRUE(std::isinf(back[0].band_hi));
  nlohmann::json cv = entry("roofline/stream_triad/kokkos/N=1000", 0, 0, 24000, "aggregate", "cv");
  cv["real_time"] = nullptr;
  nlohmann::json j = {{"benchmarks", {entry("roofline/stream_triad/kokkos/N=1000", 10, 0, 24000), cv}}};
  auto m = sp::read_measurements(j);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_DOUBLE_EQ(m[0].m.seconds, 10e-6);
}

TEST(Models, StatusIsWrittenAndReadAsItsWord) {
  for (sp::Status st : {sp::Status::pass, sp::Status::fail, sp::Status::info}) {
    sp::Verdict v{"gemm", "kokkos", "M=1", "q", "s", 1.0, 1.0, 1.0, 0.5, 2.0, st, ""};
    const auto j = sp::to_json(std::vector<sp::Verdict>{v});
    EXPECT_EQ(j[0]["status"], sp::to_string(st));
    EXPECT_EQ(sp::verdicts_from_json(j)[0].status, st);
  }
  // A results file with any other word is bad input, not a silent INFO.
  auto j = sp::to_json(std::vector<sp::Verdict>{sp::Verdict{"g", "k", "M=1", "q", "s"}});
  j[0]["status"] = "pass";
  EXPECT_THROW(sp::verdicts_from_json(j), sp::InputError);
}

TEST(Models, JudgeAppliesTheBandBothWays) {
  sp::Verdict v{"g", "k", "M=1", "q", "s"};
  v.band_lo = 0.5, v.band_hi = 1.15;
  for (double r : {0.49, 0.5, 1.0, 1.15, 1.16}) {
    v.ratio = r;
    v.judge();
    EXPECT_EQ(v.status, r >= 0.5 && r <= 1.15 ? sp::Status::pass : sp::Status::fail) << r;
    v.judge(false);
    EXPECT_EQ(v.status, sp::Status::info) << r;
  }
}

TEST(Models, ThroughputVsBaselinePrefersCallsTimedInTurn) {
  // Separate loops: openblas 1 ms vs kokkos 4 ms = 25% of the baseline
  // (gemm declares >= 90%): FAIL. The same with a paired counter of 0.95
  // (the two timed call by call): the verdict uses the pairing and passes.
  auto run = [](bool paired) {
    nlohmann::json k = entry("gemm/gemm/kokkos/dtype=fp64,M=100,N=100,K=100", 4000, 2e6, 1e6);
    if (paired) k[sp::kPairedVsBaseline] = 0.95;
    nlohmann::json j = {{"benchmarks", {k, entry("gemm/gemm/openblas/dtype=fp64,M=100,N=100,K=100", 1000, 2e6, 1e6)}}};
    auto cases = sp::read_measurements(j);
    for (auto& v : sp::judge(cases, sp::derive_machine(cases)))
      if (v.quantity == "throughput vs openblas") return v;
    return sp::Verdict{};
  };
  const sp::Verdict loops = run(false), turns = run(true);
  EXPECT_NEAR(loops.ratio, 0.25, 1e-12);
  EXPECT_EQ(loops.status, sp::Status::fail);
  EXPECT_NEAR(turns.ratio, 0.95, 1e-12);
  EXPECT_EQ(turns.status, sp::Status::pass);
  EXPECT_NE(turns.note.find("in turn"), std::string::npos);
}

TEST(Models, BandThatCannotFailIsInfoNotPass) {
  auto verdict = [](double lo, double hi, sp::Status status) {
    sp::Verdict v{"t", "kokkos", "N=1", "q", "x", 1.0, 0.3, 0.3, lo, hi, status, ""};
    return v;
  };
  std::vector<sp::Verdict> vs = {verdict(0, INFINITY, sp::Status::pass), verdict(-1, INFINITY, sp::Status::pass),
                                 verdict(0.25, INFINITY, sp::Status::pass), verdict(0, 1.15, sp::Status::pass),
                                 verdict(0.5, INFINITY, sp::Status::fail)};
  sp::demote_unfailable(vs);
  EXPECT_EQ(vs[0].status, sp::Status::info);
  EXPECT_NE(vs[0].note.find("not judged"), std::string::npos);
  EXPECT_EQ(vs[1].status, sp::Status::info);
  EXPECT_EQ(vs[2].status, sp::Status::pass);  // can fail below 0.25
  EXPECT_EQ(vs[3].status, sp::Status::pass);  // can fail above 1.15
  EXPECT_EQ(vs[4].status, sp::Status::fail);
}

TEST(Models, JudgeNeverPassesAnUnfailableBand) {
  // fp16_underflow declares its roofline band [0, inf]: inside it, yet INFO.
  nlohmann::json j = {{"benchmarks",
                       {entry("roofline/stream_triad/kokkos/N=1000", 8, 0, 24000),
                        entry("roofline/fma_peak/kokkos/dtype=fp32,items=1,iters=1", 1000, 1e6, 8),
                        entry("precision/fp16_underflow/master/D=12,H=24,steps=30,lr=0.0001", 4000, 1e4, 1e4)}}};
  auto cases = sp::read_measurements(j);
  bool found = false;
  for (auto& v : sp::judge(cases, sp::derive_machine(cases)))
    if (v.technique == "fp16_underflow" && v.quantity == "roofline time") {
      found = true;
      EXPECT_TRUE(sp::band_cannot_fail(v));
      EXPECT_EQ(v.status, sp::Status::info);
    }
  EXPECT_TRUE(found);
}
