#pragma once
// The tensor-parallel group's communication: Megatron-LM's two conjugate
// operators (megatron/core/tensor_parallel/mappings.py) reduce to a sum
// all-reduce over the group, in the forward pass after a row-parallel layer
// (g) and in the backward pass before a column-parallel layer (f). Each call
// is counted with its direction and the bytes the transport moved, so the
// counts can be checked against "two all-reduces forward and two backward
// per transformer layer" (docs/modelparallel.md, "Tensor parallelism").
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "kernels/comm/ring.hpp"
#include "kernels/modelparallel/dense.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::mp {

struct TpGroup {
  comm::Transport* t = nullptr;
  int allreduce_fwd = 0, allreduce_bwd = 0;
  uint64_t bytes_sent = 0, messages_sent = 0;

  int rank() const { return t->rank(); }
  int size() const { return t->size(); }

  // In-place sum over the group of a matrix (staged through the host).
  void all_reduce(Mat X, bool backward) {
    ++(backward ? allreduce_bwd : allreduce_fwd);
    const comm::Traffic before = t->total();
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), X);
    comm::ring_all_reduce(*t, h.data(), h.size(), comm::Op::sum);
    Kokkos::deep_copy(X, h);
    const comm::Traffic after = t->total();
    bytes_sent += after.bytes_sent - before.bytes_sent;
    messages_sent += after.messages_sent - before.messages_sent;
  }
};

// Bytes one rank sends in a ring all-reduce of n doubles over p ranks
// (ring.hpp: reduce-scatter sends every chunk but rank r's own, all-gather
// every chunk but chunk r+1): about 2 (p-1)/p n elements.
inline uint64_t ring_allreduce_bytes(size_t n, int p, int r) {
  if (p == 1) return 0;
  const comm::Partition part{n, p};
  return (2 * n - part.size(r) - part.size((r + 1) % p)) * sizeof(double);
}

}  // namespace sp::mp
