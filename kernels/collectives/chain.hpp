#pragma once
// "Ring" broadcast and reduce: a pipelined chain along the ring (NCCL's ring
// broadcast and reduce, NCCL docs "Collective operations"). The buffer is cut
// into k segments; segment j leaves the root at step j and reaches the rank
// d hops away at step j + d - 1, so the chain is busy for k + p - 2 steps of
// one segment each:
//   broadcast  (k + p - 2) (alpha + (n/k) beta)
//   reduce     (k + p - 2) (alpha + (n/k) (beta + gamma))
// (derived here; for k >> p both tend to n beta, independent of p, like the
// ring all-reduce).
#include <algorithm>

#include "kernels/comm/ring.hpp"

namespace sp::coll {

// Default pipelining granularity: big enough that alpha is small against
// segment/beta, small enough that the chain fills quickly.
constexpr size_t kChainSegmentBytes = size_t(1) << 18;

inline size_t chain_segments(size_t bytes, size_t seg_bytes = kChainSegmentBytes) {
  return std::max<size_t>(1, (bytes + seg_bytes - 1) / seg_bytes);
}

namespace detail {
struct Segments {
  size_t n, k;
  size_t begin(long j) const { return std::min(n, (n + k - 1) / k * j); }
  size_t size(long j) const { return begin(j + 1) - begin(j); }
  bool valid(long j) const { return j >= 0 && j < static_cast<long>(k); }
};
}  // namespace detail

// Afterwards every rank's data[0..n) equals root's.
template <class T>
void chain_broadcast(comm::Transport& t, T* data, size_t n, int root, size_t seg_bytes = kChainSegmentBytes) {
  const int p = t.size(), r = t.rank();
  if (p == 1) return;
  const detail::Segments seg{n, chain_segments(n * sizeof(T), seg_bytes)};
  const long d = (r - root + p) % p;  // hops from the root
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  t.set_phase("broadcast");
  for (long s = 0; s < static_cast<long>(seg.k) + p - 2; ++s) {
    const long js = s - d, jr = s - d + 1;  // forward segment js while segment jr arrives
    const bool snd = d <= p - 2 && seg.valid(js), rcv = d >= 1 && seg.valid(jr);
    if (!snd && !rcv) continue;
    t.sendrecv(snd ? data + seg.begin(js) : nullptr, snd ? seg.size(js) * sizeof(T) : 0, snd ? right : -1,
               rcv ? data + seg.begin(jr) : nullptr, rcv ? seg.size(jr) * sizeof(T) : 0, rcv ? left : -1);
  }
}

// Afterwards root's data[0..n) holds op over all ranks (the farthest rank
// starts; each rank adds its own data to a segment and passes it on toward
// the root). The other ranks' buffers hold partial results.
// scratch: room for one segment (at most n elements), kept by the caller.
template <class T>
void chain_reduce(comm::Transport& t, T* data, size_t n, comm::Op op, int root, T* scratch,
                  size_t seg_bytes = kChainSegmentBytes) {
  const int p = t.size(), r = t.rank();
  if (p == 1) return;
  const detail::Segments seg{n, chain_segments(n * sizeof(T), seg_bytes)};
  const long d = (r - root + p) % p;
  const int toward_root = (r - 1 + p) % p, away = (r + 1) % p;
  t.set_phase("reduce");
  for (long s = 0; s < static_cast<long>(seg.k) + p - 2; ++s) {
    // Segment jr arrives from farther out; segment js = jr - 1, reduced in
    // the previous step (or this rank's own data at the far end), moves on.
    const long jr = s - (p - 2 - d), js = s - (p - 1 - d);
    const bool rcv = d <= p - 2 && seg.valid(jr), snd = d >= 1 && seg.valid(js);
    if (!snd && !rcv) continue;
    t.sendrecv(snd ? data + seg.begin(js) : nullptr, snd ? seg.size(js) * sizeof(T) : 0, snd ? toward_root : -1,
               rcv ? scratch : nullptr, rcv ? seg.size(jr) * sizeof(T) : 0, rcv ? away : -1);
    if (rcv) comm::reduce_into(data + seg.begin(jr), scratch, seg.size(jr), op);
  }
}

}  // namespace sp::coll
