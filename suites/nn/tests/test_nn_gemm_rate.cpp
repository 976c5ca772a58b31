// The fraction-of-GEMM-rate verdict: judged at one rank with the band
// [0.5, inf), so it fails below half the GEMM's rate; reported (INFO) at
// more ranks or when the technique marks the case as not judged; absent
// without the rate counter. The rate probe measures something positive.
#include <gtest/gtest.h>

#include "kernels/nn/gemm_rate.hpp"

namespace {

sp::Measurement measured(double seconds, double rate, int ranks = 1) {
  sp::Measurement m;
  m.seconds = seconds;
  m.ranks = ranks;
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

TEST(NnGemmRate, ProbeMeasuresAPositiveRate) {
  const double r = sp::nn::gemm_rate<float>({{16, 24, 40, 2}, {8, 8, 8}});
  EXPECT_GT(r, 0);
  EXPECT_TRUE(std::isfinite(r));
}

}  // namespace
