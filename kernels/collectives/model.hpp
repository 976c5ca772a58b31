#pragma once
// The alpha-beta-gamma (Hockney) model of each algorithm here, and the
// bandwidth conventions of nccl-tests, from docs/collectives.md
// ("Collectives"). n is the collective's size S in bytes (the whole buffer,
// as nccl-tests' size column), p the rank count.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/collectives/chain.hpp"

namespace sp::coll {

struct AlphaBetaGamma {
  double alpha = 0;  // seconds per message
  double beta = 0;   // seconds per byte moved
  double gamma = 0;  // seconds per byte reduced
};

// The calibration cycle's parts at the largest message (cycle_pattern()):
// median seconds of its first transfer, its reduction and its last transfer
// (max over ranks); for the ring all-reduce, the reduce-scatter exchange,
// the reduction and the all-gather exchange. 0 where the cycle has none.
struct CycleTimes {
  double first_transfer = 0, reduce = 0, last_transfer = 0;
};

inline double ceil_log2(int p) {
  int l = 0;
  while ((1 << l) < p) ++l;
  return l;
}

// Predicted seconds of one call; NaN when there is no model (vendor code,
// whose algorithm is the library's choice).
inline double predict_seconds(const std::string& coll, const std::string& algo, int p, double n,
                              const AlphaBetaGamma& m) {
  const double a = m.alpha, b = m.beta, g = m.gamma, f = (p - 1.0) / p, lg = ceil_log2(p);
  if (p == 1) return 0;
  if (coll == "all_reduce") {
    if (algo == "ring") return 2 * (p - 1) * a + 2 * f * n * b + f * n * g;
    if (algo == "rabenseifner") return 2 * lg * a + 2 * f * n * b + f * n * g;
    if (algo == "recursive_doubling") return lg * (a + n * b + n * g);
    if (algo == "param_server") return 2 * (p - 1) * (a + n * b) + (p - 1) * n * g;
  } else if (coll == "reduce_scatter" && algo == "ring") {
    return (p - 1) * a + f * n * (b + g);
  } else if (coll == "all_gather" && algo == "ring") {
    return (p - 1) * a + f * n * b;
  } else if (coll == "broadcast" || coll == "reduce") {
    const double red = coll == "reduce" ? g : 0;
    if (algo == "binomial") return lg * (a + n * (b + red));
    if (algo == "ring") {
      const double k = static_cast<double>(chain_segments(static_cast<size_t>(n)));
      return (k + p - 2) * (a + (n / k) * (b + red));
    }
  }
  return NAN;
}

// nccl-tests' bus-bandwidth factor F (busbw = algbw * F; doc/PERFORMANCE.md).
inline double busbw_factor(const std::string& coll, int p) {
  if (coll == "all_reduce") return 2.0 * (p - 1) / p;
  if (coll == "reduce_scatter" || coll == "all_gather") return (p - 1.0) / p;
  return 1.0;  // broadcast, reduce
}

}  // namespace sp::coll

namespace sp::coll {

// How an algorithm's steps use the links, so alpha and beta are calibrated
// on the same pattern (calibrate.hpp): ring, Rabenseifner and recursive
// doubling steps are exchanges (each rank sends and receives at once);
// binomial trees, chains and the parameter server send one way at a time.
enum class Link { one_way, exchange };
inline Link link_pattern(const std::string& coll, const std::string& algo) {
  const bool rooted = coll == "broadcast" || coll == "reduce";
  if (!rooted && (algo == "ring" || algo == "ring_nccl" || algo == "rabenseifner" || algo == "recursive_doubling"))
    return Link::exchange;
  return Link::one_way;
}

// The calibration cycle of an algorithm (calibrate.hpp): its steps as ranks
// 0 and 1 see them at p = 2, on slices A and B of the collective's own
// buffer and the scratch S. On this shared-memory machine the cost of a
// step depends on which cache last wrote the lines it reads, so each cycle
// leaves every slice as the algorithm's own calls leave it: e.g. the ring
// all-gather alone sends a chunk no rank writes, the ring all-reduce's all-
// gather step sends the chunk it has just reduced (a chunk last written by
// another cache costs a coherence miss per line, which a cycle of the wrong
// calls would charge to the algorithm).
enum class Slot : unsigned char { A, B, S };
struct CycleStep {
  enum Kind : unsigned char {
    exchange,  // every rank sends `from` right and receives `to` from the left
    up,        // rank 1 sends `from`, rank 0 receives into `to`
    down,      // rank 0 sends `from`, rank 1 receives into `to`
    reduce     // to = op(to, from): every rank (exchange cycles) or rank 0 (one-way ones)
  } kind;
  Slot from, to;
};
struct CyclePattern {
  Link link = Link::one_way;
  std::vector<CycleStep> steps;
};
inline CyclePattern cycle_pattern(const std::string& coll, const std::string& algo) {
  using K = CycleStep;
  const Link l = link_pattern(coll, algo);
  if (coll == "all_reduce" && (algo == "ring" || algo == "ring_nccl" || algo == "rabenseifner"))
    // Reduce-scatter step (send B, receive into S), reduction into A,
    // all-gather step (send A, receive into B, which the neighbour has read).
    return {l, {{K::exchange, Slot::B, Slot::S}, {K::reduce, Slot::S, Slot::A}, {K::exchange, Slot::A, Slot::B}}};
  if (coll == "all_reduce" && algo == "recursive_doubling")  // the whole buffer, reduced in place each step
    return {l, {{K::exchange, Slot::A, Slot::S}, {K::reduce, Slot::S, Slot::A}}};
  if (coll == "reduce_scatter") return {l, {{K::exchange, Slot::B, Slot::S}, {K::reduce, Slot::S, Slot::A}}};
  if (coll == "all_gather") return {l, {{K::exchange, Slot::A, Slot::B}}};  // A: this rank's, never written
  if (coll == "all_reduce" && algo == "param_server")  // push, reduce at the server, pull into the buffer
    return {l, {{K::up, Slot::A, Slot::S}, {K::reduce, Slot::S, Slot::A}, {K::down, Slot::A, Slot::A}}};
  if (coll == "reduce") return {l, {{K::up, Slot::A, Slot::S}, {K::reduce, Slot::S, Slot::A}}};
  return {l, {{K::down, Slot::A, Slot::A}}};  // broadcast: the root's buffer is only read
}

// The largest message an algorithm sends and the chunk it reduces per step
// (elements), for calibrating beta and gamma in the same regime.
struct MessageShape {
  size_t message_bytes, reduce_elems;
  CyclePattern cycle;  // the steps the calibration times (cycle_pattern()), and their link pattern
};
inline MessageShape message_shape(const std::string& coll, const std::string& algo, int p, size_t count, size_t elt) {
  const size_t n = count * elt;
  const CyclePattern c = cycle_pattern(coll, algo);
  if (algo == "ring" && (coll == "broadcast" || coll == "reduce")) {
    const size_t k = chain_segments(n);
    return {(n + k - 1) / k, (count + k - 1) / k, c};
  }
  if (algo == "ring") return {(n + p - 1) / p, (count + p - 1) / p, c};
  if (algo == "rabenseifner") return {(n + 1) / 2, (count + 1) / 2, c};
  return {n, count, c};
}

}  // namespace sp::coll

#include <map>

namespace sp::coll {

// Bytes each rank sends per traffic phase (the largest over ranks), as the
// formulas give them; exact when p divides the count. Each ring
// phase moves (p-1)n/p per rank: the parameter server pushes
// (p-1)n out (and takes (p-1)n in).
inline std::map<std::string, double> traffic_per_rank(const std::string& coll, const std::string& algo, int p,
                                                      double n) {
  if (algo == "ring_nccl") return traffic_per_rank(coll, "ring", p, n);  // the same ring over NCCL
  std::map<std::string, double> t;
  if (p == 1) return t;
  const double f = (p - 1.0) / p;
  if (coll == "all_reduce") {
    if (algo == "ring" || algo == "rabenseifner")
      t["reduce-scatter"] = f * n, t["all-gather"] = f * n;
    else if (algo == "recursive_doubling")
      t["recursive-doubling"] = ceil_log2(p) * n;
    else if (algo == "param_server")
      t["push"] = n, t["pull"] = (p - 1) * n;
  } else if (coll == "reduce_scatter" && algo == "ring") {
    t["reduce-scatter"] = f * n;
  } else if (coll == "all_gather" && algo == "ring") {
    t["all-gather"] = f * n;
  } else if (coll == "broadcast") {
    if (algo == "binomial")
      t["broadcast"] = ceil_log2(p) * n;  // the root sends to lg p children
    else if (algo == "ring")
      t["broadcast"] = n;
  } else if (coll == "reduce") {
    if (algo == "binomial" || algo == "ring") t["reduce"] = n;
  }
  return t;
}

}  // namespace sp::coll
