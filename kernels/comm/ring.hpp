#pragma once
// Ring reduce-scatter, all-gather and all-reduce over a Transport, with every
// local reduction done by a Kokkos kernel: on host buffers by default, on
// device buffers with Exec = the device's execution space (NCCL transport).
//
// Ring phases (docs/collectives.md, "Formulas and sources"; MPICH
// allreduce_intra_ring.c): reduce-scatter takes p-1 steps, each rank sending
// and receiving one chunk of about n/p elements per step, and ends owning one
// fully reduced chunk; all-gather circulates the reduced chunks in p-1 more
// steps. Each rank sends (p-1)n/p per phase. The buffer is split into p
// balanced chunks (partition.hpp), so any count works, including count < p.
// Data parallelism, tensor parallelism and the hybrid step reduce their
// gradients and activations with these, and the collectives family
// benchmarks them against the vendor's. 16-bit element types (fp16 and
// bf16 of kernels/precision/float16.hpp) combine each received chunk in fp32
// and round once per step, their operator+= (so p - 1 roundings per element
// over a ring of p).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <vector>

#include "kernels/comm/partition.hpp"
#include "kernels/comm/reduce.hpp"
#include "kernels/comm/transport.hpp"

namespace sp::comm {

// Scratch for one received chunk, in the memory the reduction runs on; not
// zero-filled (a memset per call would cost as much as a reduction step).
template <class T, class Exec>
Kokkos::View<T*, typename Exec::memory_space> ring_scratch(size_t n) {
  return Kokkos::View<T*, typename Exec::memory_space>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ring_tmp"),
                                                       n > 0 ? n : 1);
}

// In place on data[0..n): afterwards rank r's chunk r (Partition{n, p}) holds
// the reduction over all ranks; the other chunks hold partial results.
// scratch: room for one chunk (Partition{n, p}.size(0) elements) in Exec's
// memory, for callers that keep it across calls.
template <class T, class Exec = Kokkos::DefaultHostExecutionSpace>
void ring_reduce_scatter(Transport& t, T* data, size_t n, Op op, T* scratch) {
  const int p = t.size(), r = t.rank();
  if (p == 1) return;
  const Partition part{n, p};
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  t.set_phase("reduce-scatter");
  for (int s = 0; s < p - 1; ++s) {
    // Chunk indices chosen so that after the last step rank r owns chunk r.
    const int cs = (r - s - 1 + 2 * p) % p, cr = (r - s - 2 + 2 * p) % p;
    t.sendrecv(data + part.begin(cs), part.size(cs) * sizeof(T), right, scratch, part.size(cr) * sizeof(T), left);
    reduce_into<T, Exec>(data + part.begin(cr), scratch, part.size(cr), op);
  }
}

template <class T, class Exec = Kokkos::DefaultHostExecutionSpace>
void ring_reduce_scatter(Transport& t, T* data, size_t n, Op op) {
  if (t.size() == 1) return;
  auto tmp = ring_scratch<T, Exec>(Partition{n, t.size()}.size(0));
  ring_reduce_scatter<T, Exec>(t, data, n, op, tmp.data());
}

// In place: rank r contributes chunk r of data[0..n); afterwards every rank holds all chunks.
template <class T>
void ring_all_gather(Transport& t, T* data, size_t n) {
  const int p = t.size(), r = t.rank();
  if (p == 1) return;
  const Partition part{n, p};
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  t.set_phase("all-gather");
  for (int s = 0; s < p - 1; ++s) {
    const int cs = (r - s + p) % p, cr = (r - s - 1 + 2 * p) % p;
    t.sendrecv(data + part.begin(cs), part.size(cs) * sizeof(T), right, data + part.begin(cr),
               part.size(cr) * sizeof(T), left);
  }
}

// Ring all-reduce = reduce-scatter + all-gather (2(p-1) steps).
template <class T, class Exec = Kokkos::DefaultHostExecutionSpace>
void ring_all_reduce(Transport& t, T* data, size_t n, Op op) {
  ring_reduce_scatter<T, Exec>(t, data, n, op);
  ring_all_gather(t, data, n);
}

template <class T, class Exec = Kokkos::DefaultHostExecutionSpace>
void ring_all_reduce(Transport& t, T* data, size_t n, Op op, T* scratch) {
  ring_reduce_scatter<T, Exec>(t, data, n, op, scratch);
  ring_all_gather(t, data, n);
}

}  // namespace sp::comm
