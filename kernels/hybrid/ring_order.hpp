#pragma once
// The sum a ring reduce-scatter / all-reduce (kernels/comm/ring.hpp) forms,
// reproduced on one rank from the p ranks' contributions, so that a one-rank
// step can add tensor-parallel partial products and data-parallel replica
// gradients in exactly the order the multi-rank step adds them.
//
// Order: in ring_reduce_scatter, step s of rank r sends its chunk
// (r - s - 1) mod p to rank r + 1 and adds the chunk (r - s - 2) mod p it
// receives from rank r - 1 into its own (acc += received). Chunk c is
// therefore first sent by rank c + 1, and rank c + k (k = 2 .. p) adds its
// own element to the partial sum it receives: for an element of chunk c
//   s = x_{c+1};  s = x_{c+k} + s for k = 2 .. p  (ranks mod p),
// one operator+= of T per step (for 16-bit T: the fp32 sum of the two
// widened values, rounded once; fp32 addition commutes, so x + s = s + x).
// Rank c ends with s and the all-gather copies it to every rank unchanged.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include "scaleproof/kokkos_compat.hpp"

namespace sp::hybrid {

// Ring chunk of element e of an n-element buffer over p ranks: the chunk of
// comm::Partition{n, p} (begin(c) = (n / p) c + min(c, n mod p)) holding e.
struct PartitionChunk {
  size_t n;
  int p;
  KOKKOS_INLINE_FUNCTION int operator()(size_t e) const {
    const size_t q = n / size_t(p), r = n % size_t(p);
    // The first r chunks have q + 1 elements, the others q.
    if (e < r * (q + 1)) return int(e / (q + 1));
    return int(r + (e - r * (q + 1)) / q);
  }
};

// out[e] = the ring's sum over r < p of parts[r n + e], in the order above;
// chunk_of(e) is the ring chunk of element e. out may not alias parts.
template <class T, class ChunkOf>
SP_UNIT_LOCAL void ring_order_sum(const T* parts, int p, size_t n, ChunkOf chunk_of, T* out) {
  Kokkos::parallel_for(
      "hybrid_ring_order_sum", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(const size_t e) {
        const int c = chunk_of(e);
        T s = parts[size_t((c + 1) % p) * n + e];
        for (int k = 2; k <= p; ++k) {
          T x = parts[size_t((c + k) % p) * n + e];
          x += s;
          s = x;
        }
        out[e] = s;
      });
  Kokkos::fence();
}

}  // namespace sp::hybrid
