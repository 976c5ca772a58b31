// The planner's machine figures: named values converted exactly, and the
// figures read from a benchmark JSON as the project writes it (the project's
// GEMM only, alpha from the smallest calibrated all-reduce, beta and gamma
// from the largest).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "scaleproof/params.hpp"
#include "suites/hybrid/plan_machine.hpp"

namespace {

using namespace sp::hybrid;
using nlohmann::json;

json entry(const std::string& name, double us, json counters) {
  json e = {{"name", name + "/manual_time"},
            {"run_name", name + "/manual_time"},
            {"run_type", "aggregate"},
            {"aggregate_name", "median"},
            {"real_time", us},
            {"time_unit", "us"}};
  e.update(counters);
  return e;
}

json calibration(double alpha, double beta, double gamma) {
  return {{"alpha_s", alpha}, {"beta_s_per_B", beta}, {"gamma_s_per_B", gamma}, {"ranks", 2}};
}

// `plan` written to a file and read back as --machine PLAN.json reads it; the
// file is removed whether the reading returns or throws.
MachineFigures read_back(const json& plan) {
  struct File {
    std::string path = ::testing::TempDir() + "plan_machine_test.json";
    ~File() { std::remove(path.c_str()); }
  } f;
  std::ofstream(f.path) << plan.dump();
  return plan::machine_from_file(f.path);
}

TEST(PlanMachine, NamedFiguresConvertExactly) {
  const MachineFigures m = plan::machine_from_figures(1000, 2, 10, 4);
  EXPECT_EQ(m.gemm_flops, 1000 * 1e9);
  EXPECT_EQ(m.tp.alpha, 2 * 1e-6);
  EXPECT_EQ(m.tp.beta, 1e-9 / 10);
  EXPECT_EQ(m.tp.gamma, 1e-9 / 4);
  EXPECT_EQ(m.dp.beta, m.tp.beta);
  EXPECT_EQ(m.pp.alpha, m.tp.alpha);
  EXPECT_EQ(plan::machine_from_figures(1000, 2, 10, 0).dp.gamma, 0.0);  // reductions free
  EXPECT_THROW(plan::machine_from_figures(0, 2, 10, 0), sp::InputError);
  EXPECT_THROW(plan::machine_from_figures(1000, 2, 0, 0), sp::InputError);
}

TEST(PlanMachine, FiguresFromABenchmarkJson) {
  json b = {{"benchmarks", json::array()}};
  auto& v = b["benchmarks"];
  // 2e9 FLOPs in 1000 us and 4e9 in 1000 us (kokkos): 4e12 FLOP/s; OpenBLAS faster, not the step's GEMM.
  v.push_back(entry("gemm/gemm/kokkos/dtype=fp32,M=1000,N=1000,K=1000", 1000, {{"flop", 2e9}}));
  v.push_back(entry("gemm/gemm/kokkos/dtype=fp32,M=1000,N=1000,K=2000", 1000, {{"flop", 4e9}}));
  v.push_back(entry("gemm/gemm/openblas/dtype=fp32,M=1000,N=1000,K=2000", 100, {{"flop", 4e9}}));
  const std::string ar = "collectives/all_reduce/";
  v.push_back(entry(ar + "ring/count=65536,dtype=fp32,op=sum,inplace=1", 50, calibration(9e-6, 2e-10, 1e-10)));
  v.push_back(entry(ar + "ring/count=256,dtype=fp32,op=sum,inplace=1", 5, calibration(1e-6, 7e-10, 3e-10)));
  v.push_back(entry(ar + "ring/count=4096,dtype=fp32,op=sum,inplace=1", 8, calibration(3e-6, 5e-10, 2e-10)));
  v.push_back(entry(ar + "rabenseifner/count=1048576,dtype=fp32,op=sum,inplace=1", 9, calibration(1, 1, 1)));
  const MachineFigures m = plan::machine_from_bench(b, "test");
  EXPECT_EQ(m.gemm_flops, 4e9 / 1e-3);
  EXPECT_EQ(m.dp.alpha, 1e-6);
  EXPECT_EQ(m.dp.beta, 2e-10);
  EXPECT_EQ(m.dp.gamma, 1e-10);
  EXPECT_EQ(m.tp.beta, m.dp.beta);
  // Each measured shape keeps its own rate; no triad: no element-wise term.
  ASSERT_EQ(m.gemm_rate.size(), 2u);
  EXPECT_EQ(m.gemm_rate.at({1000, 1000, 1000, GemmOps::nn}), 2e9 / 1e-3);
  EXPECT_EQ(m.gemm_rate.at({1000, 1000, 2000, GemmOps::nn}), 4e9 / 1e-3);
  EXPECT_EQ(m.rate(GemmShape{1000, 1000, 1000, 1}), 2e12);
  EXPECT_EQ(m.rate(GemmShape{64, 64, 32, 1}), m.gemm_flops);  // unmeasured shape: the uniform rate
  EXPECT_EQ(m.elementwise_bw, 0.0);
}

TEST(PlanMachine, TriadGivesTheElementwiseBandwidthAndShapesSurviveTheJson) {
  json b = {{"benchmarks", json::array()}};
  auto& v = b["benchmarks"];
  v.push_back(entry("gemm/gemm/kokkos/dtype=fp32,M=64,N=64,K=32", 10, {{"flop", 262144}}));
  v.push_back(entry("gemm/gemm/kokkos/dtype=fp32,M=512,N=512,K=128", 1000, {{"flop", 67108864}}));
  v.push_back(entry("roofline/stream_triad/kokkos/N=1048576", 1000, {{"bytes", 25165824}, {"flop", 2097152}}));
  v.push_back(entry("roofline/stream_copy/kokkos/N=1048576", 1, {{"bytes", 16777216}}));  // not the triad
  v.push_back(
      entry("collectives/all_reduce/ring/count=256,dtype=fp32,op=sum,inplace=1", 5, calibration(1e-6, 7e-10, 3e-10)));
  const MachineFigures m = plan::machine_from_bench(b, "test");
  EXPECT_EQ(m.elementwise_bw, 25165824 / 1e-3);
  EXPECT_DOUBLE_EQ(m.gemm_rate.at({64, 64, 32, GemmOps::nn}),
                   262144 / 1e-5);  // 10 us converted to seconds: one rounding
  EXPECT_EQ(m.gemm_rate.at({512, 512, 128, GemmOps::nn}), 67108864 / 1e-3);
  EXPECT_EQ(m.gemm_flops, 67108864 / 1e-3);
  // Written with a plan and read back by --machine PLAN.json: the same figures.
  const MachineFigures back = read_back({{"machine", plan::to_json(m)}});
  EXPECT_EQ(back.gemm_rate, m.gemm_rate);
  EXPECT_EQ(back.elementwise_bw, m.elementwise_bw);
  EXPECT_EQ(back.gemm_flops, m.gemm_flops);
}

// step_gemm's operand layouts: each (shape, ops) keeps its own rate, which a
// plan's JSON keeps; a layout without one takes the same shape's A B rate,
// a shape without any the uniform rate; an unknown layout in a plan's JSON
// is refused, a JSON without the field (an older plan) reads as A B.
TEST(PlanMachine, EachOperandLayoutKeepsItsOwnRate) {
  json b = {{"benchmarks", json::array()}};
  auto& v = b["benchmarks"];
  const std::string g = "hybrid/step_gemm/kokkos/dtype=fp32,M=64,N=512,K=128,sets=8,ops=";
  v.push_back(entry(g + "nn", 100, {{"flop", 8388608}}));
  v.push_back(entry(g + "nt", 125, {{"flop", 8388608}}));
  v.push_back(entry("hybrid/step_gemm/kokkos/dtype=fp32,M=512,N=128,K=64,sets=8,ops=tn", 160, {{"flop", 8388608}}));
  v.push_back(
      entry("collectives/all_reduce/ring/count=256,dtype=fp32,op=sum,inplace=1", 5, calibration(1e-6, 7e-10, 3e-10)));
  const MachineFigures m = plan::machine_from_bench(b, "test");
  ASSERT_EQ(m.gemm_rate.size(), 3u);
  EXPECT_DOUBLE_EQ(m.rate(GemmShape{64, 512, 128, 1, GemmOps::nn}), 8388608 / 100e-6);
  EXPECT_DOUBLE_EQ(m.rate(GemmShape{64, 512, 128, 1, GemmOps::nt}), 8388608 / 125e-6);
  EXPECT_DOUBLE_EQ(m.rate(GemmShape{64, 512, 128, 1, GemmOps::tn}), 8388608 / 100e-6);  // no A^T B rate: A B's
  EXPECT_DOUBLE_EQ(m.rate(GemmShape{512, 128, 64, 1, GemmOps::tn}), 8388608 / 160e-6);
  EXPECT_EQ(m.rate(GemmShape{512, 128, 64, 1, GemmOps::nn}), m.gemm_flops);  // no rate at this shape in A B
  json plan = {{"machine", plan::to_json(m)}};
  EXPECT_EQ(read_back(plan).gemm_rate, m.gemm_rate);
  for (auto& r : plan["machine"]["gemm_rates"])
    if (r["ops"] == "tn") r["ops"] = "tt";
  EXPECT_THROW(read_back(plan), sp::InputError);
  for (auto& r : plan["machine"]["gemm_rates"]) r.erase("ops");
  plan["machine"]["gemm_rates"] = json::array({plan["machine"]["gemm_rates"][0]});
  EXPECT_EQ(read_back(plan).gemm_rate.count(GemmShape{64, 512, 128, 1, GemmOps::nn}.key()), 1u);
}

// The step's own element-wise layers' rate (hybrid_step's counter
// elementwise_bytes_per_s, the best where several cases report one) replaces
// the triad's bandwidth; a case without it leaves the triad's. Its optimizer
// kernels' rate (optimizer_bytes_per_s) likewise, and survives a plan's JSON.
TEST(PlanMachine, TheStepsElementwiseRateReplacesTheTriad) {
  json b = {{"benchmarks", json::array()}};
  auto& v = b["benchmarks"];
  v.push_back(entry("gemm/gemm/kokkos/dtype=fp32,M=64,N=64,K=32", 10, {{"flop", 262144}}));
  v.push_back(entry("roofline/stream_triad/kokkos/N=1048576", 1000, {{"bytes", 25165824}, {"flop", 2097152}}));
  v.push_back(
      entry("collectives/all_reduce/ring/count=256,dtype=fp32,op=sum,inplace=1", 5, calibration(1e-6, 7e-10, 3e-10)));
  EXPECT_EQ(plan::machine_from_bench(b, "test").elementwise_bw, 25165824 / 1e-3);
  EXPECT_EQ(plan::machine_from_bench(b, "test").optimizer_bw, 0.0);  // none reported: left to the element-wise
  v.push_back(entry("hybrid/hybrid_step/kokkos/dp=2,mb=1", 900,
                    {{"elementwise_bytes_per_s", 3e8}, {"optimizer_bytes_per_s", 7e8}}));
  v.push_back(entry("hybrid/hybrid_step/kokkos/dp=2,mb=2", 800,
                    {{"elementwise_bytes_per_s", 5e8}, {"optimizer_bytes_per_s", 6e8}}));
  const MachineFigures m = plan::machine_from_bench(b, "test");
  EXPECT_EQ(m.elementwise_bw, 5e8);
  EXPECT_EQ(m.optimizer_bw, 7e8);  // the step's optimizer kernels, the best reported
  EXPECT_EQ(read_back({{"machine", plan::to_json(m)}}).optimizer_bw, 7e8);
}

// The attention core's times (step_attention, variant kokkos): the fastest
// median of each pass at each shape, a shape only with both passes; they
// survive a plan's JSON.
TEST(PlanMachine, AttentionTimesWhereBothPassesRanAndTheySurviveTheJson) {
  json b = {{"benchmarks", json::array()}};
  auto& v = b["benchmarks"];
  v.push_back(entry("gemm/gemm/kokkos/dtype=fp32,M=64,N=64,K=32", 10, {{"flop", 262144}}));
  v.push_back(
      entry("collectives/all_reduce/ring/count=256,dtype=fp32,op=sum,inplace=1", 5, calibration(1e-6, 7e-10, 3e-10)));
  const std::string a = "hybrid/step_attention/kokkos/dtype=fp32,b=8,s=64,heads=4,d=32,pass=";
  v.push_back(entry(a + "forward,sets=1", 800, json::object()));
  v.push_back(entry(a + "forward,sets=24", 900, json::object()));
  v.push_back(entry(a + "backward,sets=24", 1000, json::object()));
  v.push_back(entry("hybrid/step_attention/kokkos/dtype=fp32,b=1,s=64,heads=4,d=32,pass=forward,sets=1", 100,
                    json::object()));  // no backward at this shape: left out
  const MachineFigures m = plan::machine_from_bench(b, "test");
  ASSERT_EQ(m.attention_seconds.size(), 1u);
  EXPECT_DOUBLE_EQ(m.attention_seconds.at({8, 64, 4, 32}).first, 800e-6);
  EXPECT_DOUBLE_EQ(m.attention_seconds.at({8, 64, 4, 32}).second, 1000e-6);
  EXPECT_EQ(read_back({{"machine", plan::to_json(m)}}).attention_seconds, m.attention_seconds);
}

TEST(PlanMachine, ABenchmarkJsonWithoutTheFiguresIsRefused) {
  json only_gemm = {
      {"benchmarks", json::array({entry("gemm/gemm/kokkos/dtype=fp32,M=8,N=8,K=8", 1, {{"flop", 1024}})})}};
  EXPECT_THROW(plan::machine_from_bench(only_gemm, "test"), sp::InputError);
  json only_ring = {
      {"benchmarks", json::array({entry("collectives/all_reduce/ring/count=256,dtype=fp32,op=sum,inplace=1", 5,
                                        calibration(1e-6, 7e-10, 3e-10))})}};
  EXPECT_THROW(plan::machine_from_bench(only_ring, "test"), sp::InputError);
}

// A plan's JSON read back by --machine: a GEMM rate or an attention core's
// time that is zero or negative is refused, naming the field. (JSON has no
// infinity: a non-finite figure is written as null, which is refused too.)
TEST(PlanMachine, APlanJsonWithANonPositiveRateOrTimeIsRefused) {
  MachineFigures m = plan::machine_from_figures(1000, 10, 25, 0);
  m.gemm_rate[{64, 64, 32, GemmOps::nn}] = 5e10;
  m.attention_seconds[{8, 64, 4, 32}] = {1e-3, 2e-3};
  const json good = {{"machine", plan::to_json(m)}};
  auto refused = [&](const json& j, const std::string& field) {
    try {
      read_back(j);
    } catch (const sp::InputError& e) {
      return std::string(e.what()).find(field) != std::string::npos;
    }
    return false;
  };
  EXPECT_EQ(read_back(good).attention_seconds, m.attention_seconds);
  for (double bad : {0.0, -1.0, -std::numeric_limits<double>::min()}) {
    json j = good;
    j["machine"]["gemm_rates"][0]["flops"] = bad;
    EXPECT_TRUE(refused(j, "gemm_rates")) << bad;
    j = good;
    j["machine"]["attention_seconds"][0]["forward_s"] = bad;
    EXPECT_TRUE(refused(j, "attention_seconds")) << bad;
    j = good;
    j["machine"]["attention_seconds"][0]["backward_s"] = bad;
    EXPECT_TRUE(refused(j, "attention_seconds")) << bad;
  }
  json j = good;
  j["machine"]["gemm_rates"][0]["flops"] = nullptr;
  EXPECT_THROW(read_back(j), sp::InputError);
  j = good;
  j["machine"]["optimizer_bytes_per_s"] = -1.0;
  EXPECT_TRUE(refused(j, "optimizer_bytes_per_s"));
}

TEST(PlanMachine, JsonRoundTripKeepsTheTensorParallelLink) {
  MachineFigures m = plan::machine_from_figures(1000, 10, 25, 0);
  m.tp.beta = 1e-9 / 300;
  const json j = plan::to_json(m);
  EXPECT_EQ(j["tp"]["beta_s_per_B"].get<double>(), m.tp.beta);
  EXPECT_EQ(j["beta_s_per_B"].get<double>(), m.dp.beta);
}

}  // namespace
