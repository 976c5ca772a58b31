#pragma once
// Plain-loop references for the collectives, written independently of the
// kernels: each rank computes, from the input formula alone, what every
// element of its output must be.
//
// Inputs are small integers (nccl-tests' approach): element i of rank r is
// in [-8, 8], so every partial sum over p <= 256 ranks is an integer of
// magnitude <= 2048, exactly representable in fp16, fp32, fp64 and int32.
// Any summation order then gives the exact result, and the check demands
// equality (bound 0): a single misplaced, missing or doubled contribution
// shows up as a wrong element.
#include <cstddef>
#include <string>

namespace sp::reference {

// The input of element i on rank r (before the collective).
inline int coll_input(int rank, size_t i) {
  return static_cast<int>((i * 7 + static_cast<size_t>(rank) * 13 + 3) % 17) - 8;
}

inline double coll_combine(const std::string& op, double a, double b) {
  if (op == "max") return a > b ? a : b;
  if (op == "min") return a < b ? a : b;
  return a + b;
}

// op over ranks 0..p-1 of element i, rank by rank.
inline double coll_reduced(const std::string& op, int p, size_t i) {
  double acc = coll_input(0, i);
  for (int r = 1; r < p; ++r) acc = coll_combine(op, acc, coll_input(r, i));
  return acc;
}

// The block layout every collective here uses: n elements in p blocks whose
// sizes differ by at most one, the larger blocks first. Counted block by
// block rather than with a closed form.
inline size_t coll_block_begin(size_t n, int p, int block) {
  size_t begin = 0;
  for (int b = 0; b < block; ++b) begin += n / p + (static_cast<size_t>(b) < n % p ? 1 : 0);
  return begin;
}
inline int coll_block_owner(size_t n, int p, size_t i) {
  int b = 0;
  while (b + 1 < p && coll_block_begin(n, p, b + 1) <= i) ++b;
  return b;
}

}  // namespace sp::reference
