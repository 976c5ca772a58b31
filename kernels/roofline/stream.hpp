#pragma once
// STREAM-style kernels (McCalpin; BabelStream's formulation): one source for
// every Kokkos back end. a, b, c are device arrays; q is the scalar.
#include <Kokkos_Core.hpp>
#include "scaleproof/kokkos_compat.hpp"

namespace sp::kernels {

enum class StreamOp { copy, scale, add, triad };

// Bytes moved per element, in words (BabelStream's byte-weight table).
constexpr int stream_words(StreamOp op) { return op == StreamOp::copy || op == StreamOp::scale ? 2 : 3; }
constexpr int stream_flops(StreamOp op) { return op == StreamOp::copy ? 0 : op == StreamOp::triad ? 2 : 1; }

template <class T>
SP_UNIT_LOCAL void stream(StreamOp op, Kokkos::View<T*> a, Kokkos::View<T*> b, Kokkos::View<T*> c, T q) {
  const auto range = Kokkos::RangePolicy<>(0, a.extent(0));
  switch (op) {
    case StreamOp::copy:
      Kokkos::parallel_for(
          "stream_copy", range, KOKKOS_LAMBDA(const int64_t i) { c(i) = a(i); });
      break;
    case StreamOp::scale:
      Kokkos::parallel_for(
          "stream_scale", range, KOKKOS_LAMBDA(const int64_t i) { b(i) = q * c(i); });
      break;
    case StreamOp::add:
      Kokkos::parallel_for(
          "stream_add", range, KOKKOS_LAMBDA(const int64_t i) { c(i) = a(i) + b(i); });
      break;
    case StreamOp::triad:
      Kokkos::parallel_for(
          "stream_triad", range, KOKKOS_LAMBDA(const int64_t i) { a(i) = b(i) + q * c(i); });
      break;
  }
}

}  // namespace sp::kernels
