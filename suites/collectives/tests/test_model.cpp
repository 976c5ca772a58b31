// The model side of the collectives on synthetic data: the alpha-beta fit,
// nccl-tests' busbw factors, the per-algorithm formulas of docs/collectives.md and
// the traffic formulas. No timing is asserted.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "kernels/collectives/algorithm.hpp"
#include "kernels/collectives/calibrate.hpp"
#include "kernels/collectives/chain.hpp"
#include "kernels/collectives/model.hpp"
#include "reference/collectives/collectives_ref.hpp"

using namespace sp::coll;

namespace {
const Algorithm& rec(const char* coll, const char* algo) { return algorithm(coll_info(coll).id, algo); }
double busbw_factor(const char* coll, int p) { return coll_info(coll).busbw_factor(p); }
Link link_pattern(const char* coll, const char* algo) { return rec(coll, algo).cycle.link; }
const CyclePattern& cycle_pattern(const char* coll, const char* algo) { return rec(coll, algo).cycle; }
MessageShape message_shape(const char* coll, const char* algo, int p, size_t count, size_t elt) {
  return message_shape(rec(coll, algo), p, count, elt);
}
PhaseBytes traffic_per_rank(const char* coll, const char* algo, int p, double n) {
  return traffic_per_rank(rec(coll, algo), p, n);
}
}  // namespace

TEST(AlphaBetaFit, RecoversAnExactLine) {
  const double alpha = 1.7e-6, beta = 1.0 / 6e9;  // 1.7 us, 6 GB/s
  std::vector<double> n = {8, 64, 512, 1 << 20, 2 << 20, 4 << 20}, t;
  for (double x : n) t.push_back(alpha + x * beta);
  const LineFit f = fit_line_relative(n, t);
  EXPECT_NEAR(f.intercept, alpha, 1e-12);
  EXPECT_NEAR(f.slope, beta, 1e-18);
}

TEST(AlphaBetaFit, RelativeWeightingKeepsAlphaUnderLargeSizeNoise) {
  // 5% noise on the largest size: an unweighted least-squares line through
  // these six points has its intercept at -28.5 us (computed, not measured);
  // the relative fit keeps alpha within 10% of 2 us.
  const double alpha = 2e-6, beta = 1e-10;
  std::vector<double> n = {8, 64, 512, 16 << 20, 32 << 20, 64 << 20}, t;
  for (double x : n) t.push_back(alpha + x * beta);
  t.back() *= 1.05;
  const LineFit f = fit_line_relative(n, t);
  EXPECT_NEAR(f.intercept, alpha, 0.1 * alpha);
  EXPECT_NEAR(f.slope, beta, 0.06 * beta);
}

TEST(AlphaBetaFit, PinnedLineIsExactAtItsAnchor) {
  // A bent per-byte cost (the largest message 10% over the line of the
  // smaller two): the pinned fit goes through the anchor, the free one not.
  const double alpha = 20e-6, beta = 1.0 / 6e9;
  const std::vector<double> n = {2 << 20, 4 << 20};
  std::vector<double> t;
  for (double x : n) t.push_back(alpha + x * beta);
  const double m = 8 << 20, tm = 1.1 * (alpha + m * beta);
  const LineFit f = fit_line_through(n, t, m, tm);
  EXPECT_NEAR(f.intercept + f.slope * m, tm, 1e-12);
  const LineFit free = fit_line_relative({n[0], n[1], m}, {t[0], t[1], tm});
  EXPECT_GT(std::abs(free.intercept + free.slope * m - tm), 0.01 * tm);
}

TEST(AlphaBetaFit, PinnedLineRecoversAnExactLine) {
  const double alpha = 30e-6, beta = 1.0 / 5e9;
  const std::vector<double> n = {1 << 20, 2 << 20};
  std::vector<double> t;
  for (double x : n) t.push_back(alpha + x * beta);
  const LineFit f = fit_line_through(n, t, 4 << 20, alpha + (4 << 20) * beta);
  EXPECT_NEAR(f.intercept, alpha, 1e-12);
  EXPECT_NEAR(f.slope, beta, 1e-18);
}

TEST(AlphaBetaFit, PinnedLineKeepsAlphaNonNegative) {
  // Smaller messages relatively cheaper (a cost that grows faster than the
  // size): the pinned intercept would be negative (the weighted slope
  // through the anchor is 1.99e-4 s per MiB, so 700 us - 4 x 199 us =
  // -95 us); the line then goes through the origin and the anchor.
  const LineFit f = fit_line_through({1 << 20, 2 << 20}, {100e-6, 400e-6}, 4 << 20, 700e-6);
  EXPECT_EQ(f.intercept, 0);
  EXPECT_NEAR(f.slope * (4 << 20), 700e-6, 1e-15);
}

TEST(AlphaBetaFit, RejectsDegenerateInput) {
  EXPECT_THROW(fit_line_through({}, {}, 8, 1e-6), std::invalid_argument);
  EXPECT_THROW(fit_line_through({8}, {1e-6}, 8, 1e-6), std::invalid_argument);
  EXPECT_THROW(fit_line_through({8}, {1e-6}, 64, 0), std::invalid_argument);
  EXPECT_THROW(fit_line_relative({8}, {1e-6}), std::invalid_argument);
  EXPECT_THROW(fit_line_relative({8, 8}, {1e-6, 1e-6}), std::invalid_argument);
  EXPECT_THROW(fit_line_relative({8, 64}, {1e-6, 0}), std::invalid_argument);
}

TEST(BusBw, FactorsAreNcclTests) {
  // nccl-tests doc/PERFORMANCE.md: all-reduce 2(p-1)/p; reduce-scatter and
  // all-gather (p-1)/p; broadcast and reduce 1.
  EXPECT_DOUBLE_EQ(busbw_factor("all_reduce", 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor("all_reduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor("reduce_scatter", 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor("all_gather", 3), 2.0 / 3);
  EXPECT_DOUBLE_EQ(busbw_factor("broadcast", 16), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor("reduce", 5), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor("all_reduce", 1), 0.0);
}

TEST(Model, FormulasOfModelsMd) {
  const AlphaBetaGamma m{2e-6, 1e-9, 0.5e-9};
  const double n = 1 << 20;
  // The record's cost model by the names of the tables (collective.cpp, algorithms.cpp).
  auto predict_seconds = [](const char* coll, const char* algo, int p, double n, const AlphaBetaGamma& m) {
    const Algorithm* a = find_algorithm(coll_info(coll).id, algo);
    return a ? sp::coll::predict_seconds(*a, p, n, m) : NAN;
  };
  // ring all-reduce, p = 4: 2(p-1)a + 2((p-1)/p) n b + ((p-1)/p) n g
  EXPECT_DOUBLE_EQ(predict_seconds("all_reduce", "ring", 4, n, m), 6 * 2e-6 + 1.5 * n * 1e-9 + 0.75 * n * 0.5e-9);
  EXPECT_DOUBLE_EQ(predict_seconds("all_reduce", "rabenseifner", 4, n, m),
                   4 * 2e-6 + 1.5 * n * 1e-9 + 0.75 * n * 0.5e-9);
  EXPECT_DOUBLE_EQ(predict_seconds("all_reduce", "recursive_doubling", 8, n, m), 3 * (2e-6 + n * 1.5e-9));
  EXPECT_DOUBLE_EQ(predict_seconds("all_reduce", "param_server", 3, n, m), 4 * (2e-6 + n * 1e-9) + 2 * n * 0.5e-9);
  EXPECT_DOUBLE_EQ(predict_seconds("reduce_scatter", "ring", 2, n, m), 2e-6 + 0.5 * n * 1.5e-9);
  EXPECT_DOUBLE_EQ(predict_seconds("all_gather", "ring", 2, n, m), 2e-6 + 0.5 * n * 1e-9);
  EXPECT_DOUBLE_EQ(predict_seconds("broadcast", "binomial", 5, n, m), 3 * (2e-6 + n * 1e-9));
  // Chain with k segments: (k + p - 2)(a + (n/k) b).
  const double k = static_cast<double>(chain_segments(static_cast<size_t>(n)));
  EXPECT_GT(k, 1);
  EXPECT_DOUBLE_EQ(predict_seconds("broadcast", "ring", 3, n, m), (k + 1) * (2e-6 + n / k * 1e-9));
  EXPECT_EQ(predict_seconds("all_reduce", "ring", 1, n, m), 0);
  EXPECT_TRUE(std::isnan(predict_seconds("all_reduce", "mpi", 2, n, m)));
  EXPECT_TRUE(std::isnan(predict_seconds("all_reduce", "butterfly", 2, n, m)));
}

TEST(Model, CalibrationFollowsTheLinkPattern) {
  // Exchange steps (both directions at once) for the ring family; one-way
  // sends for trees, chains and the parameter server.
  for (const char* a : {"ring", "rabenseifner", "recursive_doubling"})
    EXPECT_EQ(link_pattern("all_reduce", a), Link::exchange) << a;
  EXPECT_EQ(link_pattern("reduce_scatter", "ring"), Link::exchange);
  EXPECT_EQ(link_pattern("all_gather", "ring"), Link::exchange);
  EXPECT_EQ(link_pattern("all_reduce", "param_server"), Link::one_way);
  EXPECT_EQ(link_pattern("broadcast", "ring"), Link::one_way);  // a chain
  EXPECT_EQ(link_pattern("reduce", "binomial"), Link::one_way);
  EXPECT_EQ(message_shape("all_reduce", "ring", 4, 1000, 4).cycle.link, Link::exchange);
  EXPECT_EQ(message_shape("broadcast", "ring", 4, 1000, 4).cycle.link, Link::one_way);
  EXPECT_EQ(message_shape("all_reduce", "ring", 4, 1000, 4).message_bytes, 1000u);
}

TEST(Model, CalibrationCycleIsTheAlgorithmsOwn) {
  // Each cycle reduces exactly when its collective reduces, moves data in
  // its link pattern, and leaves the lines as the algorithm does: the ring
  // all-reduce sends the chunk it has just reduced, the all-gather alone a
  // chunk nobody writes.
  auto reduces = [](const CyclePattern& c) {
    int n = 0;
    for (auto& s : c.steps) n += s.kind == CycleStep::reduce;
    return n;
  };
  const std::pair<const char*, const char*> cases[] = {
      {"all_reduce", "ring"},         {"all_reduce", "rabenseifner"}, {"all_reduce", "recursive_doubling"},
      {"all_reduce", "param_server"}, {"reduce_scatter", "ring"},     {"all_gather", "ring"},
      {"broadcast", "ring"},          {"broadcast", "binomial"},      {"reduce", "ring"},
      {"reduce", "binomial"}};
  for (auto [coll, algo] : cases) {
    const CyclePattern c = cycle_pattern(coll, algo);
    const std::string what = std::string(coll) + "/" + algo;
    const bool reducing = std::string(coll) != "all_gather" && std::string(coll) != "broadcast";
    EXPECT_EQ(reduces(c), reducing ? 1 : 0) << what;
    EXPECT_EQ(c.link, link_pattern(coll, algo)) << what;
    for (auto& s : c.steps)
      if (s.kind != CycleStep::reduce) EXPECT_EQ(s.kind == CycleStep::exchange, c.link == Link::exchange) << what;
    EXPECT_EQ(message_shape(coll, algo, 2, 1 << 20, 4).cycle.steps.size(), c.steps.size()) << what;
  }
  const CyclePattern ar = cycle_pattern("all_reduce", "ring");
  ASSERT_EQ(ar.steps.size(), 3u);
  EXPECT_EQ(ar.steps[1].to, Slot::A);    // reduced into A ...
  EXPECT_EQ(ar.steps[2].from, Slot::A);  // ... which the all-gather step sends
  const CyclePattern ag = cycle_pattern("all_gather", "ring");
  ASSERT_EQ(ag.steps.size(), 1u);
  EXPECT_NE(ag.steps[0].to, ag.steps[0].from);
}

TEST(Model, RingTrafficIsSeed000) {
  // (p-1)n/p per rank per phase; parameter server: (p-1)n out of the server.
  auto t = traffic_per_rank("all_reduce", "ring", 4, 1024);
  EXPECT_DOUBLE_EQ(t.at("reduce-scatter"), 768);
  EXPECT_DOUBLE_EQ(t.at("all-gather"), 768);
  EXPECT_DOUBLE_EQ(traffic_per_rank("all_reduce", "param_server", 4, 1024).at("pull"), 3 * 1024);
  EXPECT_TRUE(traffic_per_rank("all_reduce", "ring", 1, 1024).empty());
}

TEST(Reference, BlocksMatchTheRingPartition) {
  // The reference counts blocks itself; the ring's closed form must agree,
  // or the checks would compare the wrong chunks.
  for (size_t n : {0, 1, 3, 7, 1025})
    for (int p = 1; p <= 5; ++p) {
      const sp::comm::Partition part{n, p};
      for (int c = 0; c <= p; ++c) EXPECT_EQ(sp::reference::coll_block_begin(n, p, c), c < p ? part.begin(c) : n);
    }
}

TEST(Reference, InputsKeepSumsExactInHalf) {
  for (int r = 0; r < 256; ++r)
    for (size_t i = 0; i < 100; ++i) ASSERT_LE(std::abs(sp::reference::coll_input(r, i)), 8);
}
