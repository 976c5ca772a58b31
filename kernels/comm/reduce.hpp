#pragma once
// The reduction operators of the communication layer and the element-wise
// reduction every reducing collective applies to a received chunk, as a
// Kokkos kernel on the execution space where the buffers live.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include "scaleproof/kokkos_compat.hpp"

namespace sp::comm {

enum class Op { sum, max, min };

// acc[i] = op(acc[i], in[i]) on an execution space (the host's by default;
// the device's when the buffers live there, as with the NCCL transport).
template <class T, class Exec = Kokkos::DefaultHostExecutionSpace>
SP_UNIT_LOCAL void reduce_into(T* acc, const T* in, size_t n, Op op) {
  if (n == 0) return;
  Kokkos::RangePolicy<Exec> range(0, n);
  switch (op) {
    case Op::sum:
      Kokkos::parallel_for(
          "coll_sum", range, KOKKOS_LAMBDA(size_t i) { acc[i] += in[i]; });
      break;
    case Op::max:
      Kokkos::parallel_for(
          "coll_max", range, KOKKOS_LAMBDA(size_t i) { acc[i] = acc[i] < in[i] ? in[i] : acc[i]; });
      break;
    case Op::min:
      Kokkos::parallel_for(
          "coll_min", range, KOKKOS_LAMBDA(size_t i) { acc[i] = in[i] < acc[i] ? in[i] : acc[i]; });
      break;
  }
  Exec().fence();
}

}  // namespace sp::comm
