#pragma once
// The data-parallel trainer's communication: blocking ring collectives from
// kernels/comm/ring.hpp and non-blocking ones (nb_ring.hpp) on host
// memory, every byte counted by the Transport and every buffer by the
// MemoryTracker (category comm). Compute buffers live in the default memory
// space; when that space is not host-accessible (CUDA) messages are staged
// through a host buffer of one element per parameter, in which each use
// names its own slot (a parameter offset) so concurrent collectives never
// share memory.
#include <Kokkos_Core.hpp>
#include <memory>

#include "kernels/comm/ring.hpp"
#include "kernels/dataparallel/memory_tracker.hpp"
#include "kernels/dataparallel/mlp_kernels.hpp"
#include "kernels/dataparallel/nb_ring.hpp"

namespace sp::dp {

template <class T>
class DpComm {
  using MemSpace = Kokkos::DefaultExecutionSpace::memory_space;
  static constexpr bool kHostComm = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;

 public:
  DpComm(comm::Transport& t, MemoryTracker& mem, size_t stage_elems) : t_(t), mem_(mem) {
    if (!kHostComm) {
      stage_ = Kokkos::View<T*, Kokkos::HostSpace>("dp_stage", stage_elems);
      mem_.add(Mem::comm, stage_elems * sizeof(T));
    }
  }

  bool skip = false;  // overlap measurement: every collective becomes a no-op

  // Host view of device data for a message, copied into its stage slot when needed.
  T* to_host(T* dev, size_t n, size_t slot) {
    if (kHostComm || n == 0) return dev;
    Kokkos::deep_copy(HostSpan<T>(stage_.data() + slot, n), DevSpan<T>(dev, n));
    return stage_.data() + slot;
  }
  void to_dev(T* dev, T* host, size_t n) {
    if (kHostComm || n == 0 || dev == host) return;
    Kokkos::deep_copy(DevSpan<T>(dev, n), HostSpan<T>(host, n));
  }
  // The result of a non-blocking collective on the slot, back to device data.
  void from_stage(T* dev, size_t n, size_t slot) {
    if (!kHostComm) to_dev(dev, stage_.data() + slot, n);
  }

  // Blocking ring reduce-scatter and/or all-gather (both: the ring all-reduce);
  // the ring's internal chunk buffer is counted as comm while it lives.
  void blocking_ring(T* dev, size_t n, size_t slot, bool reduce, bool gather) {
    const int p = t_.size();
    if (skip || p == 1) return;
    T* h = to_host(dev, n, slot);
    const double tmp = reduce ? comm::Partition{n, p}.size(0) * sizeof(T) : 0;
    mem_.add(Mem::comm, tmp);
    if (reduce) comm::ring_reduce_scatter(t_, h, n, comm::Op::sum);
    if (gather) comm::ring_all_gather(t_, h, n);
    mem_.sub(Mem::comm, tmp);
    to_dev(dev, h, n);
  }
  void reduce_scatter(T* dev, size_t n, size_t slot) { blocking_ring(dev, n, slot, true, false); }
  void all_gather(T* dev, size_t n, size_t slot) { blocking_ring(dev, n, slot, false, true); }
  void all_reduce(T* dev, size_t n, size_t slot) { blocking_ring(dev, n, slot, true, true); }

  // Starts a non-blocking ring on host data (from to_host); null when skipped.
  std::unique_ptr<NbRing<T>> start_ring(T* host, size_t n, typename NbRing<T>::Kind kind, int tag) {
    if (skip) return nullptr;
    auto ring = std::make_unique<NbRing<T>>(t_, host, n, kind, tag);
    mem_.add(Mem::comm, ring->buffer_bytes());
    return ring;
  }
  void finish_ring(std::unique_ptr<NbRing<T>>& ring) {
    if (!ring) return;
    ring->finish();
    mem_.sub(Mem::comm, ring->buffer_bytes());
    ring.reset();
  }

 private:
  comm::Transport& t_;
  MemoryTracker& mem_;
  Kokkos::View<T*, Kokkos::HostSpace> stage_;
};

}  // namespace sp::dp
