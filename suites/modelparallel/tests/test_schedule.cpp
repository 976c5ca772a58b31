// Pipeline schedules: the generators' lists against the independent
// validator over many (p, m, v), the formulas of docs/modelparallel.md against the
// validator's simulation, and the validator against broken schedules.
#include <gtest/gtest.h>

#include "kernels/modelparallel/schedule.hpp"
#include "reference/modelparallel/schedule_check.hpp"
#include "reference/modelparallel/stash_ref.hpp"
#include "scaleproof/params.hpp"

using sp::mp::Kind;
using sp::mp::Op;
using sp::mp::ScheduleKind;

namespace {

// Messages a rank's list sends when every chunk boundary crosses ranks (p > 1).
long long count_sends(const std::vector<Op>& ops, int p, int v) {
  if (p == 1) return 0;
  long long n = 0;
  for (auto& o : ops) n += o.kind == Kind::F ? o.chunk < p * v - 1 : o.chunk > 0;
  return n;
}

void check_all(ScheduleKind k, int p, int m, int v) {
  SCOPED_TRACE(sp::mp::to_string(k) + " p=" + std::to_string(p) + " m=" + std::to_string(m) +
               " v=" + std::to_string(v));
  const auto s = sp::mp::make_schedule(k, p, m, v);
  // Uniform chunks: a stage's forward costs 1 and its backward 2, split over its v chunks.
  const auto sim = sp::reference::simulate_schedule(s.ranks, p, m, v, 1.0 / v, 2.0 / v);
  ASSERT_TRUE(sim.ok) << sim.error;
  for (int i = 0; i < p; ++i) {
    EXPECT_EQ(sim.peak_stash[i], sp::mp::predicted_peak_stash(k, p, m, v, i)) << "rank " << i;
    const auto ref = k == ScheduleKind::gpipe         ? sp::reference::PipeSchedule::gpipe
                     : k == ScheduleKind::one_f_one_b ? sp::reference::PipeSchedule::one_f_one_b
                                                      : sp::reference::PipeSchedule::interleaved;
    EXPECT_EQ(sim.peak_stash[i], sp::reference::peak_stash_sets(ref, p, m, v, i)) << "rank " << i << " (closed form)";
    EXPECT_EQ(count_sends(s.ranks[i], p, v), sp::mp::predicted_messages_sent(p, m, v, i)) << "rank " << i;
  }
  // The bubble formula holds for the simulated step exactly where the model's
  // assumptions hold; the interleaved m == p case runs every forward first.
  if (!(k == ScheduleKind::interleaved && m == p && p > 1))
    for (int i = 0; i < p; ++i) EXPECT_NEAR(sim.bubble(i), sp::mp::predicted_bubble(k, p, m, v), 1e-12) << "rank " << i;
}

}  // namespace

TEST(Schedule, GPipeAnd1F1BValidForManyShapes) {
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 16; ++m) {
      check_all(ScheduleKind::gpipe, p, m, 1);
      check_all(ScheduleKind::one_f_one_b, p, m, 1);
    }
}

TEST(Schedule, InterleavedValidForManyShapes) {
  for (int p = 1; p <= 8; ++p)
    for (int v = 1; v <= 4; ++v)
      for (int m = p; m <= 4 * p; m += p) check_all(ScheduleKind::interleaved, p, m, v);
}

TEST(Schedule, OneFOneBMatchesPipeDreamFlushFigure) {
  // p = 2, m = 4: stage 0 warms up with one forward, then alternates.
  const auto s = sp::mp::make_schedule(ScheduleKind::one_f_one_b, 2, 4, 1);
  const std::vector<Op> r0 = {{Kind::F, 0, 0}, {Kind::F, 1, 0}, {Kind::B, 0, 0}, {Kind::F, 2, 0},
                              {Kind::B, 1, 0}, {Kind::F, 3, 0}, {Kind::B, 2, 0}, {Kind::B, 3, 0}};
  const std::vector<Op> r1 = {{Kind::F, 0, 1}, {Kind::B, 0, 1}, {Kind::F, 1, 1}, {Kind::B, 1, 1},
                              {Kind::F, 2, 1}, {Kind::B, 2, 1}, {Kind::F, 3, 1}, {Kind::B, 3, 1}};
  EXPECT_EQ(s.ranks[0], r0);
  EXPECT_EQ(s.ranks[1], r1);
}

TEST(Schedule, InterleavedMatchesMegatronOrder) {
  // p = 2, v = 2, m = 4: rank 0 holds chunks 0 and 2; warm-up 2(p-1) + (v-1)p = 4.
  const auto s = sp::mp::make_schedule(ScheduleKind::interleaved, 2, 4, 2);
  const std::vector<Op> r0 = {{Kind::F, 0, 0}, {Kind::F, 1, 0}, {Kind::F, 0, 2}, {Kind::F, 1, 2},
                              {Kind::F, 2, 0}, {Kind::B, 0, 2}, {Kind::F, 3, 0}, {Kind::B, 1, 2},
                              {Kind::F, 2, 2}, {Kind::B, 0, 0}, {Kind::F, 3, 2}, {Kind::B, 1, 0},
                              {Kind::B, 2, 2}, {Kind::B, 3, 2}, {Kind::B, 2, 0}, {Kind::B, 3, 0}};
  EXPECT_EQ(s.ranks[0], r0);
}

TEST(Schedule, ValidatorDetectsDeadlock) {
  // Rank 1 wants micro-batch 1 first, rank 0 only sends it after micro-batch 0's backward.
  std::vector<std::vector<Op>> r = {{{Kind::F, 0, 0}, {Kind::B, 0, 0}, {Kind::F, 1, 0}, {Kind::B, 1, 0}},
                                    {{Kind::F, 1, 1}, {Kind::B, 1, 1}, {Kind::F, 0, 1}, {Kind::B, 0, 1}}};
  const auto sim = sp::reference::simulate_schedule(r, 2, 2, 1, 1, 2);
  EXPECT_FALSE(sim.ok);
  EXPECT_NE(sim.error.find("deadlock"), std::string::npos) << sim.error;
}

TEST(Schedule, ValidatorDetectsMissingDuplicateMisplacedAndEarlyBackward) {
  auto good = sp::mp::make_schedule(ScheduleKind::one_f_one_b, 2, 3, 1).ranks;
  ASSERT_TRUE(sp::reference::simulate_schedule(good, 2, 3, 1, 1, 2).ok);
  auto missing = good;
  missing[1].pop_back();
  EXPECT_FALSE(sp::reference::simulate_schedule(missing, 2, 3, 1, 1, 2).ok);
  auto twice = good;
  twice[0].push_back(twice[0].front());
  EXPECT_FALSE(sp::reference::simulate_schedule(twice, 2, 3, 1, 1, 2).ok);
  auto misplaced = good;
  std::swap(misplaced[0].front(), misplaced[1].front());
  EXPECT_FALSE(sp::reference::simulate_schedule(misplaced, 2, 3, 1, 1, 2).ok);
  auto early = good;  // rank 1's first backward moved before its forward
  std::swap(early[1][0], early[1][1]);
  const auto sim = sp::reference::simulate_schedule(early, 2, 3, 1, 1, 2);
  EXPECT_FALSE(sim.ok);
  EXPECT_NE(sim.error.find("before its forward"), std::string::npos) << sim.error;
}

TEST(Schedule, ShapeRules) {
  EXPECT_THROW(sp::mp::check_shape(ScheduleKind::interleaved, 4, 6, 2, 16), sp::InputError);  // m % p
  EXPECT_NO_THROW(sp::mp::check_shape(ScheduleKind::interleaved, 4, 8, 2, 16));
  EXPECT_THROW(sp::mp::check_shape(ScheduleKind::interleaved, 4, 8, 2, 7), sp::InputError);  // layers < p v
  EXPECT_THROW(sp::mp::check_shape(ScheduleKind::gpipe, 2, 4, 2, 8), sp::InputError);        // v needs interleaved
  EXPECT_NO_THROW(sp::mp::check_shape(ScheduleKind::one_f_one_b, 3, 5, 1, 3));
  EXPECT_THROW(sp::mp::parse_schedule("zb"), sp::InputError);
}

TEST(Schedule, ChunkLayersCoverModelOnce) {
  for (int L = 1; L <= 20; ++L)
    for (int C = 1; C <= L; ++C) {
      int next = 0;
      for (int c = 0; c < C; ++c) {
        auto r = sp::mp::chunk_layers(L, C, c);
        EXPECT_EQ(r.first, next);
        EXPECT_GE(r.count, 1);
        next += r.count;
      }
      EXPECT_EQ(next, L);
    }
}

TEST(Schedule, ReplayWithMeasuredDurations) {
  const auto s = sp::mp::make_schedule(ScheduleKind::one_f_one_b, 2, 4, 1);
  // Uniform costs replay the uniform simulation.
  const auto uniform = sp::reference::simulate_schedule(s.ranks, 2, 4, 1, 1, 2);
  const auto replay = sp::reference::simulate_schedule(
      s.ranks, 2, 4, 1, [&](int i, size_t k) { return s.ranks[i][k].kind == Kind::F ? 1.0 : 2.0; });
  ASSERT_TRUE(replay.ok);
  EXPECT_DOUBLE_EQ(replay.makespan, uniform.makespan);
  // A stage twice as slow leaves the other idle for longer than the formula says.
  const auto slow = sp::reference::simulate_schedule(s.ranks, 2, 4, 1, [&](int i, size_t k) {
    return (i == 1 ? 2.0 : 1.0) * (s.ranks[i][k].kind == Kind::F ? 1 : 2);
  });
  EXPECT_GT(slow.bubble(0), sp::mp::predicted_bubble(ScheduleKind::one_f_one_b, 2, 4, 1));
}
