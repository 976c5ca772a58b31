// Every record of the algorithms table (kernels/collectives/algorithms.cpp)
// agrees with its own run function at this rank count: the rank rule
// accepts exactly the rank counts the run accepts, the traffic formula is
// what the transport counts (every phase, exactly, when p divides the
// count), and the cost model's alpha and beta coefficients are the messages
// and bytes of the busiest rank as the transport counts them. Run once per
// rank count under mpiexec (family.cmake); at one rank in the plain suite.
// No timing is asserted: the model is evaluated at unit alpha and beta.
// Counted bytes and messages are integers; the formulas compute f = (p-1)/p
// in floating point, so formula and count are compared within 4 ulps
// (EXPECT_DOUBLE_EQ: one rounding of f and one of each product), far below
// the one element (4 bytes) a wrong chunk would differ by.
#include <gtest/gtest.h>

#include <string>

#include "kernels/collectives/algorithm.hpp"
#include "scaleproof/comm.hpp"
#include "suites/collectives/engine.hpp"

using namespace sp::coll;

namespace {

// 3 * 2^17 fp32 elements (1.5 MiB): divisible by 1, 2, 3 and 4, so every
// formula is exact, and six chain segments, so the chain pipelines.
constexpr size_t kCount = size_t(3) << 17;

CaseSpec make_case(Coll c, int p) {
  CaseSpec s;
  s.coll = c;
  s.count = kCount;
  s.root = coll_info(c).has_root ? p - 1 : 0;  // not rank 0: the rotation by the root is exercised
  return s;
}

std::string what(const Algorithm& a) { return coll_info(a.coll).name + "/" + a.name; }

// The records this host build runs (device records need a GPU).
template <class F>
void for_each_host_record(F&& f) {
  for (auto& c : collectives())
    for (const Algorithm* a : algorithms_of(c.id))
      if (a->memory == Memory::host) f(*a);
}

}  // namespace

TEST(AlgorithmRecords, RankRuleAcceptsExactlyWhatTheRunAccepts) {
  const int p = sp::comm::size();
  for_each_host_record([&](const Algorithm& a) {
    Engine e(make_case(a.coll, p));
    bool refused = false;
    try {
      e.run(a);
    } catch (const std::invalid_argument&) {
      refused = true;  // the kernels refuse before they communicate, on every rank
    }
    EXPECT_EQ(refused, !accepts(a.ranks, p)) << what(a) << " at p = " << p;
    EXPECT_EQ(rank_problem(a, p).empty(), accepts(a.ranks, p)) << what(a);
    if (!refused) EXPECT_EQ(sp::comm::sum(e.check().wrong), 0) << what(a) << " at p = " << p;
  });
}

TEST(AlgorithmRecords, TrafficFormulaIsWhatTheTransportCounts) {
  const int p = sp::comm::size();
  for_each_host_record([&](const Algorithm& a) {
    if (!a.traffic || !accepts(a.ranks, p)) return;
    const CaseSpec s = make_case(a.coll, p);
    Engine e(s);
    e.run(a);
    const double S = static_cast<double>(s.bytes());
    const auto& counted = e.transport().traffic();
    const PhaseBytes formula = traffic_per_rank(a, p, S);
    double elsewhere = 0;  // bytes in phases the formula does not name
    for (auto& [phase, t] : counted)
      if (!formula.count(phase)) elsewhere += static_cast<double>(t.bytes_sent);
    EXPECT_EQ(sp::comm::max(elsewhere), 0) << what(a) << ": traffic in a phase the formula leaves out";
    for (auto& [phase, bytes] : formula) {
      auto it = counted.find(phase);
      const double sent = it == counted.end() ? 0 : static_cast<double>(it->second.bytes_sent);
      EXPECT_DOUBLE_EQ(sp::comm::max(sent), bytes) << what(a) << " " << phase << " at p = " << p;
      if (a.p_minus_1_n_per_phase) EXPECT_EQ(sp::comm::sum(sent), (p - 1) * S) << what(a) << " " << phase;
    }
    if (a.server_bytes && p > 1) {
      const sp::comm::Traffic tot = e.transport().total();
      EXPECT_DOUBLE_EQ(sp::comm::max(static_cast<double>(tot.bytes_sent + tot.bytes_recv)), a.server_bytes(p, S))
          << what(a);
    }
  });
}

TEST(AlgorithmRecords, CostModelCountsWhatTheTransportCounts) {
  // The model's alpha coefficient is the number of messages on the busiest
  // rank's path and its beta coefficient the bytes: in exchange steps a
  // rank's sends and receives overlap (its sends count), in one-way steps
  // they take turns on its link (both count). A pipelined chain overlaps
  // segments across ranks, so beyond p = 2 its model is the pipeline's
  // depth, not one rank's count.
  const int p = sp::comm::size();
  for_each_host_record([&](const Algorithm& a) {
    if (!a.predict || !accepts(a.ranks, p) || (a.pipelined && p > 2)) return;
    const CaseSpec s = make_case(a.coll, p);
    Engine e(s);
    e.run(a);
    const double S = static_cast<double>(s.bytes());
    const sp::comm::Traffic t = e.transport().total();
    const bool exchange = a.cycle.link == Link::exchange;
    const double bytes = static_cast<double>(exchange ? t.bytes_sent : t.bytes_sent + t.bytes_recv);
    const double messages = static_cast<double>(exchange ? t.messages_sent : t.messages_sent + t.messages_recv);
    EXPECT_DOUBLE_EQ(predict_seconds(a, p, S, {1, 0, 0}), sp::comm::max(messages)) << what(a) << " alpha at p = " << p;
    EXPECT_DOUBLE_EQ(predict_seconds(a, p, S, {0, 1, 0}), sp::comm::max(bytes)) << what(a) << " beta at p = " << p;
  });
}

TEST(AlgorithmRecords, EveryCollectiveHasAModelledProjectAlgorithmFirst) {
  // The techniques take the first record as the reference algorithm of
  // their headline and model check.
  for (auto& c : collectives()) {
    const auto v = algorithms_of(c.id);
    ASSERT_FALSE(v.empty()) << c.name;
    EXPECT_EQ(v.front()->source, Source::project) << c.name;
    EXPECT_TRUE(has_model(*v.front())) << c.name;
    for (const Algorithm* a : v)
      if (has_model(*a)) EXPECT_FALSE(a->cycle.steps.empty()) << what(*a) << ": a model needs a calibration cycle";
  }
}
