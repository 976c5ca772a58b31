// The fraction-of-GEMM-rate verdict: judged at one rank with the band
// [0.5, inf), so it fails below half the GEMM's rate; reported (INFO) at
// more ranks or when the technique marks the case as not judged; absent
// without the probe's counters; the technique's time is the probe's, not
// the timed loop's. The products at the shapes count their FLOPs and give a
// rate from the probe's time.
#include <gtest/gtest.h>

#include "kernels/nn/gemm_rate.hpp"

namespace {

sp::Measurement measured(double seconds, double rate, int ranks = 1) {
  sp::Measurement m;
  m.seconds = 10 * seconds;  // the timed loop's: not what the verdict reads
  m.ranks = ranks;
  m.counters[sp::nn::kStepSeconds] = seconds;
  m.counters[sp::nn::kGemmRateCounter] = rate;
  return m;
}

std::vector<sp::Verdict> verdicts(const sp::Measurement& m, bool judged = true) {
  sp::Info info;
  info.name = "t";
  std::vector<sp::Verdict> out;
  sp::nn::append_gemm_rate_verdict(info, sp::Params{{"n", "1"}}, "v", 1e9, m, judged, out);
  return out;
}

TEST(NnGemmRate, VerdictBand) {
  auto v = verdicts(measured(1.0, 1.5e9));  // 1 GFLOP/s vs 1.5: 0.67
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].status, sp::Status::pass);
  EXPECT_NEAR(v[0].ratio, 1.0 / 1.5, 1e-12);
  v = verdicts(measured(1.0, 2.5e9));  // 0.4 of the GEMM's rate
  EXPECT_EQ(v[0].status, sp::Status::fail);
  EXPECT_EQ(verdicts(measured(1.0, 2.5e9, 2))[0].status, sp::Status::info);
  EXPECT_EQ(verdicts(measured(1.0, 2.5e9), false)[0].status, sp::Status::info);
  sp::Measurement none;
  none.seconds = 1;
  EXPECT_TRUE(verdicts(none).empty());
}

TEST(NnGemmRate, ProductsAtTheShapes) {
  sp::nn::GemmAtShapes g;
  g.prepare<float>({{16, 24, 40, 2}, {8, 8, 8}, {0, 8, 8, 3}});  // an empty shape makes nothing
  EXPECT_EQ(g.flops(), 2.0 * 16 * 24 * 40 * 2 + 2.0 * 8 * 8 * 8);
  g.run();
  Kokkos::fence();
  std::map<std::string, double> out;
  sp::nn::gemm_rate_counters(g, out);
  EXPECT_TRUE(out.empty());  // no probe time yet
  out[sp::nn::kGemmSeconds] = 1e-3;
  sp::nn::gemm_rate_counters(g, out);
  EXPECT_DOUBLE_EQ(out.at(sp::nn::kGemmRateCounter), g.flops() / 1e-3);
  const auto probes = sp::nn::gemm_rate_probes("kokkos");  // one rank: declared
  ASSERT_EQ(probes.size(), 1u);
  const sp::Probe& p = probes[0];
  EXPECT_EQ(p.calls, (std::vector<std::string>{"kokkos", sp::nn::kGemmCall}));
  EXPECT_EQ(p.each, (std::vector<std::string>{sp::nn::kStepSeconds, sp::nn::kGemmSeconds}));
  g.clear();
  EXPECT_EQ(g.flops(), 0);
}

}  // namespace
