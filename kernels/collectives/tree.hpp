#pragma once
// Binomial-tree broadcast and reduce over a Transport, on host buffers
// (MPICH bcast_intra_binomial.c, reduce_intra_binomial.c). Any rank count.
// Time lg p (alpha + n beta) for broadcast, lg p (alpha + n beta + n gamma)
// for reduce (docs/collectives.md, "Time of one call"; the gamma term is ours:
// each receiving step also reduces n bytes).

#include "kernels/comm/ring.hpp"

namespace sp::coll {

// Afterwards every rank's data[0..n) equals root's.
template <class T>
void binomial_broadcast(comm::Transport& t, T* data, size_t n, int root) {
  const int p = t.size(), r = t.rank();
  const int vr = (r - root + p) % p;  // rank relative to the root
  t.set_phase("broadcast");
  int mask = 1;
  // Receive once, from the parent: vr with its lowest set bit cleared.
  for (; mask < p; mask <<= 1)
    if (vr & mask) {
      t.recv(data, n * sizeof(T), (r - mask + p) % p);
      break;
    }
  // Forward to the children below that bit, farthest first.
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < p) t.send(data, n * sizeof(T), (r + mask) % p);
}

// Afterwards root's data[0..n) holds op over all ranks; the other ranks'
// buffers hold partial results. Needs a commutative op (sum, max, min are).
// scratch: room for n elements, kept by the caller across calls.
template <class T>
void binomial_reduce(comm::Transport& t, T* data, size_t n, comm::Op op, int root, T* scratch) {
  const int p = t.size(), r = t.rank();
  const int vr = (r - root + p) % p;
  t.set_phase("reduce");
  for (int mask = 1; mask < p; mask <<= 1) {
    if (vr & mask) {  // send the partial result up, then done
      t.send(data, n * sizeof(T), ((vr & ~mask) + root) % p);
      return;
    }
    if ((vr | mask) < p) {
      t.recv(scratch, n * sizeof(T), ((vr | mask) + root) % p);
      comm::reduce_into(data, scratch, n, op);
    }
  }
}

}  // namespace sp::coll
