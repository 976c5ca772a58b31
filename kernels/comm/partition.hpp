#pragma once
// Balanced partition of a buffer over ranks, shared by every family that
// splits a buffer into per-rank chunks (the ring collectives, sharded
// optimizer states, the hybrid step's cost model). Chunk sizes differ by at
// most one element, so any count works, including count < p (some chunks
// are then empty).
#include <algorithm>
#include <cstddef>

namespace sp::comm {

// Balanced partition of n elements into p chunks: chunk c is [begin(c), begin(c+1)).
struct Partition {
  size_t n;
  int p;
  size_t begin(int c) const { return (n / p) * c + std::min<size_t>(c, n % p); }
  size_t size(int c) const { return n / p + (static_cast<size_t>(c) < n % p ? 1 : 0); }
};

}  // namespace sp::comm
