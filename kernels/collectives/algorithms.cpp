// The table of collectives algorithms: one record per algorithm (the record
// type and its fields are explained in algorithm.hpp). The formulas are
// those of docs/collectives.md, "Formulas and sources"; n is the collective's size in
// bytes, p the rank count, f = (p-1)/p, lg = ceil(log2 p), k the chain's
// segment count.
#include <Kokkos_Core.hpp>
#include <cstring>

#include "kernels/collectives/algorithm.hpp"
#include "kernels/collectives/chain.hpp"
#include "kernels/collectives/mpi_vendor.hpp"
#include "kernels/collectives/nccl.hpp"
#include "kernels/collectives/param_server.hpp"
#include "kernels/collectives/recursive.hpp"
#include "kernels/collectives/tree.hpp"
#include "kernels/comm/ring.hpp"
#include "scaleproof/params.hpp"

namespace sp::coll {
namespace {

using Host = Kokkos::DefaultHostExecutionSpace;
using K = CycleStep;
constexpr auto A = Slot::A, B = Slot::B, S = Slot::S;

// The ring's two phases, with the reduction on Exec (the host, or the
// device for the ring over NCCL).
template <class Exec, class C>
void ring_rs(const C& c) {
  using T = typename C::value_type;
  c.phase("reduce-scatter", [&] { comm::ring_reduce_scatter<T, Exec>(c.t, c.buf, c.n, c.op, c.room); });
}
template <class C>
void ring_ag(const C& c) {
  c.phase("all-gather", [&] { comm::ring_all_gather(c.t, c.buf, c.n); });
}

// Calibration cycles (model.hpp): the steps as ranks 0 and 1 see them at p = 2.
// Reduce-scatter step (send B, receive into S), reduction into A, all-gather
// step (send A, receive into B, which the neighbour has read).
const CyclePattern kRingAllReduceCycle{Link::exchange, {{K::exchange, B, S}, {K::reduce, S, A}, {K::exchange, A, B}}};
const CyclePattern kReduceScatterCycle{Link::exchange, {{K::exchange, B, S}, {K::reduce, S, A}}};
const CyclePattern kAllGatherCycle{Link::exchange, {{K::exchange, A, B}}};  // A: this rank's, never written
const CyclePattern kBroadcastCycle{Link::one_way, {{K::down, A, A}}};       // the root's buffer is only read
const CyclePattern kReduceCycle{Link::one_way, {{K::up, A, S}, {K::reduce, S, A}}};
const CyclePattern kNoCycle{};

// Message shapes: the largest message sent and the chunk reduced per step.
MessageShape whole(int, size_t count, size_t elt, const CyclePattern& c) { return {count * elt, count, c}; }
MessageShape ring_chunk(int p, size_t count, size_t elt, const CyclePattern& c) {
  const size_t n = count * elt, q = static_cast<size_t>(p);
  return {(n + q - 1) / q, (count + q - 1) / q, c};
}
MessageShape halves(int, size_t count, size_t elt, const CyclePattern& c) {
  return {(count * elt + 1) / 2, (count + 1) / 2, c};
}
MessageShape chain_segment(int, size_t count, size_t elt, const CyclePattern& c) {
  const size_t n = count * elt, k = chain_segments(n);
  return {(n + k - 1) / k, (count + k - 1) / k, c};
}

// Traffic formulas shared by records whose phases move the same bytes.
PhaseBytes ring_two_phases(int p, double n) {
  const double f = (p - 1.0) / p;
  return {{"reduce-scatter", f * n}, {"all-gather", f * n}};
}

double chain_steps(double n) { return static_cast<double>(chain_segments(static_cast<size_t>(n))); }

// Fields in order (algorithm.hpp): coll, name, source, memory, ranks, run,
// predict, cycle, message, traffic, p_minus_1_n_per_phase, server_bytes,
// pipelined.
std::vector<Algorithm> make_table() {
  std::vector<Algorithm> t = {
      // ---- all-reduce
      {Coll::all_reduce, "ring", Source::project, Memory::host, RankRule::any,
       runs([](const auto& c) { ring_rs<Host>(c), ring_ag(c); }),
       [](int p, double n, const AlphaBetaGamma& m) {
         const double f = (p - 1.0) / p;
         return 2 * (p - 1) * m.alpha + 2 * f * n * m.beta + f * n * m.gamma;
       },
       kRingAllReduceCycle, ring_chunk, ring_two_phases, true, nullptr, false},
      {Coll::all_reduce, "rabenseifner", Source::project, Memory::host, RankRule::power_of_two, runs([](const auto& c) {
         c.phase("reduce-scatter", [&] { halving_reduce_scatter(c.t, c.buf, c.n, c.op, c.room); });
         c.phase("all-gather", [&] { doubling_all_gather(c.t, c.buf, c.n); });
       }),
       [](int p, double n, const AlphaBetaGamma& m) {
         const double f = (p - 1.0) / p;
         return 2 * ceil_log2(p) * m.alpha + 2 * f * n * m.beta + f * n * m.gamma;
       },
       kRingAllReduceCycle, halves, ring_two_phases, true, nullptr, false},
      {Coll::all_reduce, "recursive_doubling", Source::project, Memory::host, RankRule::power_of_two,
       runs([](const auto& c) { recursive_doubling_all_reduce(c.t, c.buf, c.n, c.op, c.room); }),
       [](int p, double n, const AlphaBetaGamma& m) { return ceil_log2(p) * (m.alpha + n * m.beta + n * m.gamma); },
       // The whole buffer, reduced in place each step.
       CyclePattern{Link::exchange, {{K::exchange, A, S}, {K::reduce, S, A}}}, whole,
       [](int p, double n) {
         return PhaseBytes{{"recursive-doubling", ceil_log2(p) * n}};
       },
       false, nullptr, false},
      {Coll::all_reduce, "param_server", Source::project, Memory::host, RankRule::any,
       runs([](const auto& c) { param_server_all_reduce(c.t, c.buf, c.n, c.op, c.room); }),
       [](int p, double n, const AlphaBetaGamma& m) {
         return 2 * (p - 1) * (m.alpha + n * m.beta) + (p - 1) * n * m.gamma;
       },
       // Push, reduce at the server, pull into the buffer.
       CyclePattern{Link::one_way, {{K::up, A, S}, {K::reduce, S, A}, {K::down, A, A}}}, whole,
       [](int p, double n) {
         return PhaseBytes{{"push", n}, {"pull", (p - 1) * n}};
       },
       false, [](int p, double n) { return 2.0 * (p - 1) * n; }, false},
      // ---- reduce-scatter
      {Coll::reduce_scatter, "ring", Source::project, Memory::host, RankRule::any,
       runs([](const auto& c) { ring_rs<Host>(c); }),
       [](int p, double n, const AlphaBetaGamma& m) {
         return (p - 1) * m.alpha + (p - 1.0) / p * n * (m.beta + m.gamma);
       },
       kReduceScatterCycle, ring_chunk,
       [](int p, double n) {
         return PhaseBytes{{"reduce-scatter", (p - 1.0) / p * n}};
       },
       true, nullptr, false},
      // ---- all-gather
      {Coll::all_gather, "ring", Source::project, Memory::host, RankRule::any, runs([](const auto& c) { ring_ag(c); }),
       [](int p, double n, const AlphaBetaGamma& m) { return (p - 1) * m.alpha + (p - 1.0) / p * n * m.beta; },
       kAllGatherCycle, ring_chunk,
       [](int p, double n) {
         return PhaseBytes{{"all-gather", (p - 1.0) / p * n}};
       },
       true, nullptr, false},
      // ---- broadcast
      {Coll::broadcast, "ring", Source::project, Memory::host, RankRule::any,
       runs([](const auto& c) { chain_broadcast(c.t, c.buf, c.n, c.root); }),
       [](int p, double n, const AlphaBetaGamma& m) {
         const double k = chain_steps(n);
         return (k + p - 2) * (m.alpha + (n / k) * m.beta);
       },
       kBroadcastCycle, chain_segment,
       [](int, double n) {
         return PhaseBytes{{"broadcast", n}};
       },
       false, nullptr, true},
      {Coll::broadcast, "binomial", Source::project, Memory::host, RankRule::any,
       runs([](const auto& c) { binomial_broadcast(c.t, c.buf, c.n, c.root); }),
       [](int p, double n, const AlphaBetaGamma& m) { return ceil_log2(p) * (m.alpha + n * m.beta); }, kBroadcastCycle,
       whole,
       // The root sends to lg p children.
       [](int p, double n) {
         return PhaseBytes{{"broadcast", ceil_log2(p) * n}};
       },
       false, nullptr, false},
      // ---- reduce
      {Coll::reduce, "ring", Source::project, Memory::host, RankRule::any,
       runs([](const auto& c) { chain_reduce(c.t, c.buf, c.n, c.op, c.root, c.room); }),
       [](int p, double n, const AlphaBetaGamma& m) {
         const double k = chain_steps(n);
         return (k + p - 2) * (m.alpha + (n / k) * (m.beta + m.gamma));
       },
       kReduceCycle, chain_segment,
       [](int, double n) {
         return PhaseBytes{{"reduce", n}};
       },
       false, nullptr, true},
      {Coll::reduce, "binomial", Source::project, Memory::host, RankRule::any,
       runs([](const auto& c) { binomial_reduce(c.t, c.buf, c.n, c.op, c.root, c.room); }),
       [](int p, double n, const AlphaBetaGamma& m) { return ceil_log2(p) * (m.alpha + n * (m.beta + m.gamma)); },
       kReduceCycle, whole,
       [](int, double n) {
         return PhaseBytes{{"reduce", n}};
       },
       false, nullptr, false},
  };
#ifdef SP_HAVE_NCCL
  // The project's ring over NCCL send/recv on device memory. No model: the
  // calibration times host links only.
  using Device = Kokkos::DefaultExecutionSpace;
  t.push_back({Coll::all_reduce, "ring_nccl", Source::project, Memory::device, RankRule::any,
               runs([](const auto& c) { ring_rs<Device>(c), ring_ag(c); }), nullptr, kNoCycle, ring_chunk,
               ring_two_phases, false, nullptr, false});
  t.push_back({Coll::reduce_scatter, "ring_nccl", Source::project, Memory::device, RankRule::any,
               runs([](const auto& c) { ring_rs<Device>(c); }), nullptr, kNoCycle, ring_chunk,
               [](int p, double n) {
                 return PhaseBytes{{"reduce-scatter", (p - 1.0) / p * n}};
               },
               false, nullptr, false});
  t.push_back({Coll::all_gather, "ring_nccl", Source::project, Memory::device, RankRule::any,
               runs([](const auto& c) { ring_ag(c); }), nullptr, kNoCycle, ring_chunk,
               [](int p, double n) {
                 return PhaseBytes{{"all-gather", (p - 1.0) / p * n}};
               },
               false, nullptr, false});
#endif
#ifdef SP_HAVE_MPI
  // MPICH's collectives on host memory (mpi_vendor.hpp).
  auto mpi = [](Coll c, Runs r) {
    return Algorithm{c,        "mpi", Source::vendor, Memory::host, RankRule::any, r,    nullptr,
                     kNoCycle, whole, nullptr,        false,        nullptr,       false};
  };
  t.push_back(
      mpi(Coll::all_reduce, runs([](const auto& c) { mpi::all_reduce(comm::world(), c.src, c.buf, c.n, c.op); })));
  t.push_back(mpi(Coll::reduce_scatter,
                  runs([](const auto& c) { mpi::reduce_scatter(comm::world(), c.src, c.buf, c.n, c.op); })));
  t.push_back(mpi(Coll::all_gather, runs([](const auto& c) { mpi::all_gather(comm::world(), c.src, c.buf, c.n); })));
  t.push_back(mpi(Coll::broadcast, runs([](const auto& c) {
                    if (c.src != c.buf && c.t.rank() == c.root) std::memcpy(c.buf, c.src, c.n * sizeof(*c.buf));
                    mpi::broadcast(comm::world(), c.buf, c.n, c.root);
                  })));
  t.push_back(
      mpi(Coll::reduce, runs([](const auto& c) { mpi::reduce(comm::world(), c.src, c.buf, c.n, c.op, c.root); })));
#endif
#ifdef SP_HAVE_NCCL
  // NCCL's collectives on device memory (nccl.hpp).
  auto nccl = [](Coll c, Runs r) {
    return Algorithm{c,        "nccl", Source::vendor, Memory::device, RankRule::any, r,    nullptr,
                     kNoCycle, whole,  nullptr,        false,          nullptr,       false};
  };
  t.push_back(nccl(Coll::all_reduce,
                   runs([](const auto& c) { nccl::run_collective("all_reduce", c.src, c.buf, c.n, c.op, c.root); })));
  t.push_back(nccl(Coll::reduce_scatter, runs([](const auto& c) {
                     nccl::run_collective("reduce_scatter", c.src, c.buf, c.n, c.op, c.root);
                   })));
  t.push_back(nccl(Coll::all_gather,
                   runs([](const auto& c) { nccl::run_collective("all_gather", c.src, c.buf, c.n, c.op, c.root); })));
  t.push_back(nccl(Coll::broadcast,
                   runs([](const auto& c) { nccl::run_collective("broadcast", c.src, c.buf, c.n, c.op, c.root); })));
  t.push_back(
      nccl(Coll::reduce, runs([](const auto& c) { nccl::run_collective("reduce", c.src, c.buf, c.n, c.op, c.root); })));
#endif
  return t;
}

}  // namespace

const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> t = make_table();
  return t;
}

std::vector<const Algorithm*> algorithms_of(Coll c) {
  std::vector<const Algorithm*> v;
  for (auto& a : algorithms())
    if (a.coll == c && a.source == Source::project) v.push_back(&a);
  for (auto& a : algorithms())
    if (a.coll == c && a.source == Source::vendor) v.push_back(&a);
  return v;
}

const Algorithm* find_algorithm(Coll c, const std::string& name) {
  for (auto& a : algorithms())
    if (a.coll == c && name == a.name) return &a;
  return nullptr;
}

const Algorithm& algorithm(Coll c, const std::string& name) {
  if (const Algorithm* a = find_algorithm(c, name)) return *a;
  std::string names;
  for (auto* a : algorithms_of(c)) names += (names.empty() ? "" : ", ") + std::string(a->name);
  throw InputError("unknown algorithm '" + name + "' for " + coll_info(c).name + " in this build (" + names + ")");
}

std::string rank_problem(const Algorithm& a, int p) {
  if (accepts(a.ranks, p)) return "";
  return std::string(a.name) + " needs a power-of-two rank count (got " + std::to_string(p) + ")";
}

double predict_seconds(const Algorithm& a, int p, double n, const AlphaBetaGamma& m) {
  if (!a.predict) return NAN;
  return p == 1 ? 0 : a.predict(p, n, m);
}

PhaseBytes traffic_per_rank(const Algorithm& a, int p, double n) {
  if (!a.traffic || p == 1) return {};
  return a.traffic(p, n);
}

MessageShape message_shape(const Algorithm& a, int p, size_t count, size_t elt) {
  return a.message(p, count, elt, a.cycle);
}

}  // namespace sp::coll
