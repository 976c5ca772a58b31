#pragma once
// Power-of-two all-reduce algorithms over a Transport, on host buffers.
//
// Recursive doubling (MPICH allreduce_intra_recursive_doubling.c): lg p
// steps, each exchanging the whole buffer with partner r^d and reducing:
//   lg p (alpha + n beta + n gamma).
// Rabenseifner (MPICH allreduce_intra_reduce_scatter_allgather.c): recursive
// halving reduce-scatter, then recursive doubling all-gather:
//   2 lg p alpha + 2 ((p-1)/p) n beta + ((p-1)/p) n gamma.
// (docs/collectives.md, "Time of one call".) Both need p to be a power of two;
// MPICH folds the extra ranks in first, this suite instead refuses other
// rank counts (std::invalid_argument here, a one-line input error in the
// CLI) so the measured algorithm is exactly the modelled one.
//
// Rabenseifner uses the ring's chunk layout (Partition{n, p}): afterwards
// the reduce-scatter half leaves rank r owning chunk r, as the ring does,
// and each phase moves (p-1)n/p bytes per rank under the same phase labels.
#include <stdexcept>
#include <string>

#include "kernels/comm/ring.hpp"

namespace sp::coll {

inline bool is_power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

inline void require_power_of_two(int p, const char* algorithm) {
  if (!is_power_of_two(p))
    throw std::invalid_argument(std::string(algorithm) + " needs a power-of-two rank count (got " + std::to_string(p) +
                                ")");
}

// scratch: room for n elements, kept by the caller across calls: allocated
// per call, a large one comes from the system (above glibc's mmap
// threshold) and costs page faults on every call, which would be timed as
// the algorithm's.
template <class T>
void recursive_doubling_all_reduce(comm::Transport& t, T* data, size_t n, comm::Op op, T* scratch) {
  const int p = t.size(), r = t.rank();
  require_power_of_two(p, "recursive doubling");
  t.set_phase("recursive-doubling");
  for (int d = 1; d < p; d <<= 1) {
    t.sendrecv(data, n * sizeof(T), r ^ d, scratch, n * sizeof(T), r ^ d);
    comm::reduce_into(data, scratch, n, op);
  }
}

// Recursive halving: afterwards rank r's chunk r holds the full reduction.
// scratch: room for n elements (at most half of them are used), kept by the caller.
template <class T>
void halving_reduce_scatter(comm::Transport& t, T* data, size_t n, comm::Op op, T* scratch) {
  const int p = t.size(), r = t.rank();
  require_power_of_two(p, "recursive halving");
  const comm::Partition part{n, p};
  t.set_phase("reduce-scatter");
  int lo = 0;  // this rank's current range of chunks is [lo, lo + 2d)
  for (int d = p / 2; d >= 1; d /= 2) {
    const bool upper = (r & d) != 0;
    const int keep = upper ? lo + d : lo, give = upper ? lo : lo + d;
    const size_t kb = part.begin(keep), kn = part.begin(keep + d) - kb;
    const size_t gb = part.begin(give), gn = part.begin(give + d) - gb;
    t.sendrecv(data + gb, gn * sizeof(T), r ^ d, scratch, kn * sizeof(T), r ^ d);
    comm::reduce_into(data + kb, scratch, kn, op);
    lo = keep;
  }
}

// Recursive doubling all-gather: rank r starts with chunk r, ends with all.
template <class T>
void doubling_all_gather(comm::Transport& t, T* data, size_t n) {
  const int p = t.size(), r = t.rank();
  require_power_of_two(p, "recursive doubling all-gather");
  const comm::Partition part{n, p};
  t.set_phase("all-gather");
  for (int d = 1; d < p; d <<= 1) {
    const int mine = r & ~(d - 1), theirs = mine ^ d;  // aligned blocks of d chunks
    const size_t mb = part.begin(mine), mn = part.begin(mine + d) - mb;
    const size_t tb = part.begin(theirs), tn = part.begin(theirs + d) - tb;
    t.sendrecv(data + mb, mn * sizeof(T), r ^ d, data + tb, tn * sizeof(T), r ^ d);
  }
}

template <class T>
void rabenseifner_all_reduce(comm::Transport& t, T* data, size_t n, comm::Op op, T* scratch) {
  halving_reduce_scatter(t, data, n, op, scratch);
  doubling_all_gather(t, data, n);
}

}  // namespace sp::coll
