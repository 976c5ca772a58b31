// The conformance matrix of the hybrid step at the process's rank count W:
// for each chosen factorisation W = dp x tp x pp a tiny model and a layout
// that rotate through the schedules, ZeRO stages, checkpointing and 1 or 3
// steps. On every rank: each parameter it holds equals the single-rank
// reference within the reference's running error bound, and every counted
// quantity (memory per category at its peak, bytes and collectives per
// group, pipeline messages) equals the cost model's prediction for that rank.
#include <gtest/gtest.h>

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/hybrid/cost_model.hpp"
#include "kernels/hybrid/step.hpp"
#include "reference/hybrid/hybrid_ref.hpp"
#include "scaleproof/comm.hpp"
#include "suites/hybrid/hybrid_counts.hpp"
#include "suites/hybrid/one_rank_step.hpp"

namespace {

using namespace sp::hybrid;

struct Case {
  ModelShape m;
  Layout l;
  int steps;
  std::string name() const {
    return "dp" + std::to_string(l.dp) + " tp" + std::to_string(l.tp) + " pp" + std::to_string(l.pp) + " " +
           sp::mp::to_string(l.schedule) + " v" + std::to_string(l.v) + " mb" + std::to_string(l.micro_batches) +
           " zero" + std::to_string(l.zero_stage) + " ckpt" + std::to_string(l.ckpt_every) + " steps" +
           std::to_string(steps);
  }
};

// Every factorisation W = dp x tp x pp.
std::vector<GridCoord> all_factorisations(int W) {
  std::vector<GridCoord> all;
  for (int tp = 1; tp <= W; ++tp)
    for (int pp = 1; pp * tp <= W; ++pp)
      if (W % (tp * pp) == 0) all.push_back({W / (tp * pp), tp, pp});
  return all;
}

// Factorisations of W: all of them up to 4 ranks; from 5 on (slow on a small
// machine) pure dp, pure tp, pure pp and the most balanced mixed one.
std::vector<GridCoord> factorisations(int W) {
  const std::vector<GridCoord> all = all_factorisations(W);
  if (W <= 4) return all;
  std::vector<GridCoord> out = {{W, 1, 1}, {1, W, 1}, {1, 1, W}};
  GridCoord best{W, 1, 1};
  auto spread = [](const GridCoord& c) { return std::max({c.dp, c.tp, c.pp}); };
  for (const auto& c : all)
    if ((c.dp > 1) + (c.tp > 1) + (c.pp > 1) >= 2 && (spread(best) == W || spread(c) < spread(best))) best = c;
  if (spread(best) < W) out.push_back(best);
  return out;
}

// The factorisations of W that factorisations(W) leaves out (none up to 4
// ranks): the rest of the matrix, run by CTest's `full` label.
std::vector<GridCoord> remaining_factorisations(int W) {
  const std::vector<GridCoord> chosen = factorisations(W);
  std::vector<GridCoord> out;
  for (const GridCoord& c : all_factorisations(W)) {
    auto same = [&](const GridCoord& x) { return x.dp == c.dp && x.tp == c.tp && x.pp == c.pp; };
    if (std::none_of(chosen.begin(), chosen.end(), same)) out.push_back(c);
  }
  return out;
}

Case make_case(const GridCoord& f, int index) {
  static const sp::mp::ScheduleKind kinds[] = {sp::mp::ScheduleKind::one_f_one_b, sp::mp::ScheduleKind::gpipe,
                                               sp::mp::ScheduleKind::interleaved};
  Case c;
  c.l.dp = f.dp, c.l.tp = f.tp, c.l.pp = f.pp;
  c.l.storage = StorageType::fp64;
  c.l.schedule = kinds[index % 3];
  c.l.zero_stage = index % 4;
  c.l.v = c.l.schedule == sp::mp::ScheduleKind::interleaved ? 2 : 1;
  c.l.micro_batches = c.l.schedule == sp::mp::ScheduleKind::interleaved ? f.pp : 2;
  const int ckpt = (index / 2) % 3;  // 0, 0, 1, 1, 2, 2, ...
  const int per_chunk = ckpt == 2 ? 2 : 1 + (index % 2);
  c.l.ckpt_every = ckpt;
  c.m.layers = f.pp * c.l.v * per_chunk;
  c.m.heads = f.tp == 1 ? 2 : f.tp;
  c.m.hidden = 2 * c.m.heads;
  c.m.seq = 3 + index % 2;
  c.m.global_batch = f.dp * c.l.micro_batches;
  c.steps = index % 2 == 0 ? 1 : 3;
  return c;
}

// On every rank: each parameter it holds equals the single-rank fp64
// reference within its running error bound, and every counted quantity
// equals the cost model's prediction for that rank.
void check64(const Case& c, int W, int me) {
  ASSERT_EQ(layout_error(c.m, c.l, W), "") << c.name();
  SCOPED_TRACE(c.name() + " rank " + std::to_string(me));
  HybridStep<double> step(c.m, c.l, me);
  step.load();
  for (int s = 0; s < c.steps; ++s) step.step();
  const ref::Model want = ref::train<double>(c.m, c.steps);
  long long checked = 0, wrong = 0;
  double worst = 0;
  step.for_each_held([&](int layer, const ParamPos& p, double v) {
    const ref::E& e = want.at({layer, p.t})(int(p.i), int(p.j));
    const double err = std::fabs(v - double(e.v));
    ++checked;
    if (!(err <= double(e.e))) ++wrong, worst = std::max(worst, err);
  });
  if (me == 0) std::printf("%s: %lld parameters checked on rank 0\n", c.name().c_str(), checked);
  EXPECT_GT(checked, 0);
  EXPECT_EQ(wrong, 0) << "largest error outside the bound " << worst;
  const Counted got = counted(step.memory(), step.counters(), c.steps);
  const Counted pred = predicted(c.m, c.l, me);
  for (size_t k = 0; k < got.names.size(); ++k) EXPECT_EQ(got.values[k], pred.values[k]) << got.names[k];
  sp::comm::barrier();
}

TEST(HybridMatrix, EveryChosenFactorisationMatchesTheReferenceAndTheCostModel) {
  const int W = sp::comm::size(), me = sp::comm::rank();
  int index = W;  // the rotation starts at W so that each rank count sees other combinations
  for (const GridCoord& f : factorisations(W)) check64(make_case(f, index++), W, me);
}

}  // namespace

namespace {

using namespace sp::hybrid;

// Pipeline parallelism moves data, it changes no sum: with one replica and
// no tensor split, every parameter of the fp32 step on W pipeline stages
// (each schedule, ZeRO 1, checkpointing) is bitwise the one of the same
// step on one rank, which each process runs alone for the comparison.
TEST(HybridMatrix, Fp32PipelineIsBitwiseTheOneRankStep) {
  const int W = sp::comm::size(), me = sp::comm::rank();
  if (W > 4) GTEST_SKIP() << "2..4 stages cover it; more ranks are slow on a small machine";
  ModelShape m;
  m.layers = 2 * W, m.hidden = 8, m.heads = 2, m.seq = 4, m.global_batch = 2 * W;
  Layout one;
  one.micro_batches = W, one.zero_stage = 1;
  std::map<std::pair<int, int64_t>, float> want;
  {
#ifdef SP_HAVE_MPI
    HybridStep<float> solo(m, one, 0, sp::comm::self());
#else
    HybridStep<float> solo(m, one, 0);
#endif
    solo.load();
    for (int s = 0; s < 2; ++s) solo.step();
    const BlockShape k = block_shape(m, one);
    int64_t idx = 0;
    solo.for_each_held([&](int layer, const ParamPos&, double v) { want[{layer, idx++ % k.elems()}] = float(v); });
  }
  for (auto kind :
       {sp::mp::ScheduleKind::gpipe, sp::mp::ScheduleKind::one_f_one_b, sp::mp::ScheduleKind::interleaved}) {
    Layout l = one;
    l.pp = W, l.schedule = kind, l.v = kind == sp::mp::ScheduleKind::interleaved ? 2 : 1;
    l.ckpt_every = 1;
    if (!layout_error(m, l, W).empty()) continue;  // interleaved needs layers % (2W) == 0: holds
    HybridStep<float> st(m, l, me);
    st.load();
    for (int s = 0; s < 2; ++s) st.step();
    const BlockShape k = block_shape(m, l);
    int64_t idx = 0, differ = 0, checked = 0;
    st.for_each_held([&](int layer, const ParamPos&, double v) {
      const float got = float(v), w = want.at({layer, idx++ % k.elems()});
      ++checked;
      differ += std::memcmp(&got, &w, sizeof got) != 0;
    });
    EXPECT_GT(checked, 0);
    EXPECT_EQ(differ, 0) << sp::mp::to_string(kind) << " rank " << me;
    sp::comm::barrier();
  }
}

}  // namespace

namespace {

using namespace sp::hybrid;

// The initial loss scale of the 16-bit cases, 2^6: with 2^16 the fp16
// activation gradients of these models exceed 65504 and steps are skipped
// (the scaler's job, but then fewer steps would be compared).
sp::precision::ScalerConfig scaler16() {
  sp::precision::ScalerConfig c;
  c.init_scale = 64;
  return c;
}

// fp32: the one-rank step in a layout's reduction order is that layout's
// step bit for bit for every factorisation of W (1..4 ranks) with tensor or
// data parallelism - the same arithmetic as in 16 bits, without the
// roundings to 16 bits - at ZeRO 1 (gradients reduce-scattered after the
// schedule) and ZeRO 2 (per micro-batch), 2 micro-batches per replica.
TEST(HybridMatrix, Fp32TensorAndDataParallelAreBitwiseTheOrderedOneRankStep) {
  const int W = sp::comm::size(), me = sp::comm::rank();
  if (W == 1 || W > 4) GTEST_SKIP() << "2..4 ranks: every factorisation with tp or dp > 1; more are slow here";
  for (const GridCoord& f : factorisations(W)) {
    if (f.dp == 1 && f.tp == 1) continue;
    for (int zero : {1, 2}) {
      ModelShape m;
      m.heads = f.tp == 1 ? 2 : f.tp, m.hidden = 2 * m.heads, m.layers = 2 * f.pp, m.seq = 3;
      Layout l;
      l.dp = f.dp, l.tp = f.tp, l.pp = f.pp, l.micro_batches = 2, l.zero_stage = zero;
      m.global_batch = l.dp * l.micro_batches;
      ASSERT_EQ(layout_error(m, l, W), "");
      HybridStep<float> st(m, l, me);
      st.load();
      for (int s = 0; s < 2; ++s) st.step();
      const ParamValues want = one_rank_masters<float>(m, l, 2, {}, nullptr, true);
      long long checked = 0, differ = 0;
      st.for_each_held([&](int layer, const ParamPos& p, double v) {
        ++checked;
        differ += v != want.at(param_key(layer, p));
      });
      EXPECT_GT(checked, 0);
      EXPECT_EQ(differ, 0) << "dp" << f.dp << " tp" << f.tp << " pp" << f.pp << " zero " << zero << " rank " << me;
      sp::comm::barrier();
    }
  }
}

// 16-bit storage at W ranks: every factorisation of W (the ones the matrix
// above chooses) once with fp16 and once with bf16, at the rotation's tiny
// shapes, 1 or 3 steps. On every rank the counted quantities equal the cost
// model's (2-byte storage, 4-byte gradients and optimizer state) and some
// step ran; the fp32 master weights and the 16-bit working copy are bitwise
// the reference's: the one-rank step for dp = tp = 1 (pipeline splits, any
// schedule, ZeRO stage, checkpointing), else the one-rank step adding the
// tensor-parallel partial products and the replicas' gradients in the
// layout's ring order (docs/hybrid.md, "16-bit storage").
// Every copy of every parameter, over all ranks: f(key, value) per copy
// (the working copy and the masters each checked this way).
template <class Each>
std::map<std::tuple<int, int, int64_t, int64_t>, std::vector<double>> all_copies(Each&& each) {
  std::vector<double> mine;
  each([&](int layer, const ParamPos& p, double v) {
    mine.insert(mine.end(), {double(layer), double(int(p.t)), double(p.i), double(p.j), v});
  });
  std::vector<double> all = mine;
#ifdef SP_HAVE_MPI
  const int W = sp::comm::size();
  int n = int(mine.size());
  std::vector<int> counts(static_cast<size_t>(W)), displs(static_cast<size_t>(W));
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, sp::comm::world());
  for (int r = 1; r < W; ++r) displs[size_t(r)] = displs[size_t(r) - 1] + counts[size_t(r) - 1];
  all.assign(size_t(displs.back() + counts.back()), 0);
  MPI_Allgatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, sp::comm::world());
#endif
  std::map<std::tuple<int, int, int64_t, int64_t>, std::vector<double>> out;
  for (size_t k = 0; k + 4 < all.size(); k += 5)
    out[{int(all[k]), int(all[k + 1]), int64_t(all[k + 2]), int64_t(all[k + 3])}].push_back(all[k + 4]);
  return out;
}

// Parameters the copies cover, and copies that differ from the first copy.
std::pair<size_t, long long> coverage_and_disagreement(
    const std::map<std::tuple<int, int, int64_t, int64_t>, std::vector<double>>& copies) {
  long long differ = 0;
  for (const auto& [key, vs] : copies)
    for (double v : vs) differ += std::memcmp(&v, &vs.front(), sizeof v) != 0;
  return {copies.size(), differ};
}

// Master weights this rank holds, those that differ from want, and working
// copies that differ from want rounded to S.
template <class S>
std::tuple<long long, long long, long long> differ_from(const HybridStep<S>& step, const ParamValues& want) {
  long long checked = 0, differ = 0, held_differ = 0;
  step.for_each_master([&](int layer, const ParamPos& p, double v) {
    ++checked;
    differ += v != want.at(param_key(layer, p));
  });
  step.for_each_held([&](int layer, const ParamPos& p, double v) {
    const double rounded = double(sp::nn::load(sp::nn::store_as<S>(float(want.at(param_key(layer, p))), 0)));
    held_differ += v != rounded;
  });
  return {checked, differ, held_differ};
}

template <class S>
void check16(Case c, int W, int me) {
  c.l.storage = storage_of<S>();
  c.l.ckpt_every = std::min(c.l.ckpt_every, blocks_per_chunk(c.m, c.l));
  ASSERT_EQ(layout_error(c.m, c.l, W), "") << c.name();
  SCOPED_TRACE(std::string(to_string(c.l.storage)) + " " + c.name() + " rank " + std::to_string(me));
  HybridStep<S> step(c.m, c.l, me);
  step.set_scaler(scaler16());
  step.load();
  for (int s = 0; s < c.steps; ++s) step.step();
  EXPECT_LT(step.skipped_steps(), c.steps) << "no step ran";
  const Counted got = counted(step.memory(), step.counters(), c.steps);
  const Counted pred = predicted(c.m, c.l, me);
  for (size_t k = 0; k < got.names.size(); ++k) EXPECT_EQ(got.values[k], pred.values[k]) << got.names[k];
  // Every parameter of the model is held somewhere, and where several ranks
  // hold it (tensor-parallel replicas of the layer norms, data-parallel
  // replicas) the copies are bitwise equal: ring all-reduces give every
  // member the same sum, Adam runs on the same gradient, the gathers copy.
  const int h = c.m.hidden, f = c.m.ffn_width();
  const size_t model = size_t(c.m.layers) * size_t(4 * h + 4 * h * h + 2 * h * f);
  for (const bool master : {false, true}) {
    const auto [covered, differ] = coverage_and_disagreement(all_copies([&](auto&& fn) {
      if (master)
        step.for_each_master(fn);
      else
        step.for_each_held(fn);
    }));
    EXPECT_EQ(covered, model) << (master ? "master weights" : "working copy");
    EXPECT_EQ(differ, 0) << (master ? "master weights" : "working copy");
  }
  // Every layout against its one-rank reference, bitwise: the plain one-rank
  // step for dp = tp = 1, else the one-rank step adding the tensor-parallel
  // partial products and the replicas' gradients in this layout's order.
  int skipped = -1;
  const ParamValues want = reference_masters<S>(c.m, c.l, c.steps, scaler16(), &skipped);
  EXPECT_EQ(step.skipped_steps(), skipped);
  const auto [checked, differ, held_differ] = differ_from(step, want);
  if (me == 0)
    std::printf("%s %s: %lld master weights bitwise on rank 0\n", to_string(c.l.storage), c.name().c_str(), checked);
  EXPECT_GT(checked, 0);
  EXPECT_EQ(differ, 0);
  EXPECT_EQ(held_differ, 0);
  sp::comm::barrier();
}

TEST(HybridMatrix, SixteenBitEveryFactorisationCountsAndPipelineBitwise) {
  const int W = sp::comm::size(), me = sp::comm::rank();
  int index = W + 1;  // a rotation other than the fp64 matrix's
  for (const GridCoord& f : factorisations(W)) {
    check16<sp::precision::fp16_t>(make_case(f, index), W, me);
    check16<sp::precision::bf16_t>(make_case(f, index + 1), W, me);
    index += 2;
  }
}

// The rest of the factorisations of W (5..8 ranks: the mixed ones the two
// tests above leave out), each in fp64 against the reference and in fp16
// and bf16 bitwise, as above. Slow on a small machine: CTest runs it under
// the label `full` (ctest --preset full), not in the default preset.
TEST(HybridMatrixFull, RemainingFactorisationsInFp64AndSixteenBits) {
  const int W = sp::comm::size(), me = sp::comm::rank();
  const std::vector<GridCoord> rest = remaining_factorisations(W);
  if (rest.empty()) GTEST_SKIP() << "the default matrix covers every factorisation of " << W;
  int index = 2 * W;
  for (const GridCoord& f : rest) {
    check64(make_case(f, index), W, me);
    check16<sp::precision::fp16_t>(make_case(f, index + 1), W, me);
    check16<sp::precision::bf16_t>(make_case(f, index + 2), W, me);
    index += 3;
  }
}

// Two data-parallel replicas of one micro-batch each sum their fp32
// gradients once, g0 + g1 (a ring of two adds the partner's chunk to its
// own: the same sum on both, fp32 addition being commutative); the one-rank
// step with ZeRO 2 and the same two micro-batches adds each micro-batch's
// gradient to the accumulator, (0 + g0) + g1: the same bits. Activations are
// the same (each micro-batch holds the same rows), so the whole step is
// bitwise the one-rank step's, for every ZeRO stage of the replicas and with
// the remaining ranks as pipeline stages.
TEST(HybridMatrix, SixteenBitTwoReplicasAreBitwiseTheOneRankZero2Step) {
  const int W = sp::comm::size(), me = sp::comm::rank();
  if (W % 2 != 0 || W > 4) GTEST_SKIP() << "dp = 2 with W / 2 pipeline stages, W = 2 or 4";
  ModelShape m;
  m.layers = W, m.hidden = 8, m.heads = 2, m.seq = 4, m.global_batch = 2;
  for (int zero = 0; zero <= 3; ++zero)
    for (const StorageType st : {StorageType::fp16, StorageType::bf16}) {
      Layout l;
      l.dp = 2, l.pp = W / 2, l.micro_batches = 1, l.zero_stage = zero, l.storage = st;
      Layout one = l;  // one_rank_layout(l) keeps the stage: ask for ZeRO 2 there
      one.zero_stage = 2;
      ASSERT_EQ(layout_error(m, l, W), "");
      long long differ = 0, checked = 0;
      auto run = [&](auto tag) {
        using S = decltype(tag);
        HybridStep<S> step(m, l, me);
        step.set_scaler(scaler16());
        step.load();
        for (int s = 0; s < 3; ++s) step.step();
        EXPECT_EQ(step.skipped_steps(), 0);
        const ParamValues want = one_rank_masters<S>(m, one, 3, scaler16());
        step.for_each_master([&](int layer, const ParamPos& p, double v) {
          ++checked;
          differ += v != want.at(param_key(layer, p));
        });
      };
      if (st == StorageType::fp16)
        run(sp::precision::fp16_t{});
      else
        run(sp::precision::bf16_t{});
      EXPECT_GT(checked, 0);
      EXPECT_EQ(differ, 0) << to_string(st) << " zero " << zero << " rank " << me;
      sp::comm::barrier();
    }
}

// The bitwise check can fail: against the in-order reference a tensor- and
// data-parallel layout agrees, but not with one master weight of the
// reference moved by one ulp of its 16-bit storage (exactly that parameter
// differs, on the ranks holding it), nor with the plain one-rank step, which
// adds the tensor-parallel partial products and the replicas' gradients in
// another order.
TEST(HybridMatrix, SixteenBitCheckCatchesOneUlpAndAnotherOrder) {
  const int W = sp::comm::size(), me = sp::comm::rank();
  ModelShape m;
  m.layers = 2, m.hidden = 8, m.heads = 2, m.seq = 4;
  Layout l;
  l.tp = W % 2 == 0 ? 2 : 1, l.dp = W / l.tp, l.micro_batches = 2, l.zero_stage = 1;
  l.storage = StorageType::fp16;
  m.global_batch = l.dp * l.micro_batches;
  ASSERT_EQ(layout_error(m, l, W), "");
  using S = sp::precision::fp16_t;
  HybridStep<S> step(m, l, me);
  step.set_scaler(scaler16());
  step.load();
  for (int s = 0; s < 3; ++s) step.step();
  const ParamValues want = reference_masters<S>(m, l, 3, scaler16());
  EXPECT_EQ(std::get<1>(differ_from(step, want)), 0);
  // One parameter (the first weight of W1 in the last layer) one 16-bit ulp off.
  ParamValues off = want;
  const auto key = std::make_tuple(m.layers - 1, int(Tensor::w1), int64_t(0), int64_t(0));
  const S x = sp::nn::store_as<S>(float(off.at(key)), 0);
  S next = x;
  next.bits = static_cast<decltype(next.bits)>(next.bits + 1);
  off.at(key) = double(sp::nn::load(next));
  long long holds = 0;
  step.for_each_master([&](int layer, const ParamPos& p, double) { holds += param_key(layer, p) == key; });
  EXPECT_EQ(std::get<1>(differ_from(step, off)), holds);
  long long holders = holds;
#ifdef SP_HAVE_MPI
  MPI_Allreduce(&holds, &holders, 1, MPI_LONG_LONG, MPI_SUM, sp::comm::world());
#endif
  EXPECT_GE(holders, 1);
  // The plain one-rank step: another order of the same sums.
  if (W > 1) {
    long long other = std::get<1>(differ_from(step, one_rank_masters<S>(m, l, 3, scaler16())));
#ifdef SP_HAVE_MPI
    MPI_Allreduce(MPI_IN_PLACE, &other, 1, MPI_LONG_LONG, MPI_SUM, sp::comm::world());
#endif
    EXPECT_GT(other, 0);
  }
  sp::comm::barrier();
}

// An overflow on one rank (the last) makes every rank skip the step: every
// parameter keeps its initial value, S is halved everywhere.
TEST(HybridMatrix, SixteenBitOverflowOnOneRankSkipsTheStepEverywhere) {
  const int W = sp::comm::size(), me = sp::comm::rank();
  const std::vector<GridCoord> fs = factorisations(W);
  Case c = make_case(fs.back(), 0);
  c.l.storage = StorageType::fp16;
  ASSERT_EQ(layout_error(c.m, c.l, W), "");
  for (const bool inject : {false, true}) {  // without the fault the step runs: the skip is the fault's
    HybridStep<sp::precision::fp16_t> step(c.m, c.l, me);
    step.set_scaler(scaler16());
    step.load();
    std::vector<double> before, after;
    step.for_each_master([&](int, const ParamPos&, double v) { before.push_back(v); });
    if (inject && me == W - 1) step.inject_nonfinite();
    step.step();
    step.for_each_master([&](int, const ParamPos&, double v) { after.push_back(v); });
    EXPECT_EQ(step.skipped_steps(), inject ? 1 : 0) << "rank " << me;
    EXPECT_EQ(step.scaler().scale(), scaler16().init_scale / (inject ? 2 : 1)) << "rank " << me;
    EXPECT_EQ(after == before, inject) << "rank " << me;
    sp::comm::barrier();
  }
}

}  // namespace
