#pragma once
// The vocabulary of the alpha-beta-gamma (Hockney) model of the collective
// algorithms (docs/collectives.md, "Time of one call"): the calibrated
// parameters, the link pattern and calibration cycle an algorithm's record
// declares (algorithm.hpp, algorithms.cpp), and the message shape it is calibrated at.
// n is the collective's size S in bytes (the whole buffer, as nccl-tests'
// size column), p the rank count.
#include <cstddef>
#include <string>
#include <vector>

namespace sp::coll {

struct AlphaBetaGamma {
  double alpha = 0;  // seconds per message
  double beta = 0;   // seconds per byte moved
  double gamma = 0;  // seconds per byte reduced
};

// The calibration cycle's parts at the largest message (the record's cycle):
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

// How an algorithm's steps use the links, so alpha and beta are calibrated
// on the same pattern (calibrate.hpp): ring, Rabenseifner and recursive
// doubling steps are exchanges (each rank sends and receives at once);
// binomial trees, chains and the parameter server send one way at a time.
enum class Link { one_way, exchange };

// The calibration cycle of an algorithm (calibrate.hpp): its steps as ranks
// 0 and 1 see them at p = 2, on slices A and B of the collective's own
// buffer and the scratch S. On a shared-memory machine the cost of a
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

// The largest message an algorithm sends and the chunk it reduces per step
// (elements), for calibrating beta and gamma in the same regime.
struct MessageShape {
  size_t message_bytes, reduce_elems;
  CyclePattern cycle;  // the steps the calibration times (the record's cycle), and their link pattern
};

}  // namespace sp::coll
