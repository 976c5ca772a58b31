#pragma once
// View types shared by the convolution kernels, and the fused epilogue
// (bias, activation) every kernel applies to a finished accumulator.
#include <Kokkos_Core.hpp>

#include "kernels/conv/conv_spec.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::conv {

// Activations [N][C][H][W] and weights [C_out][C_in/g][kh][kw], row-major.
template <class T>
using Tensor = Kokkos::View<T****, Kokkos::LayoutRight>;
template <class T>
using CTensor = Kokkos::View<const T****, Kokkos::LayoutRight>;
template <class T>
using Vec = Kokkos::View<T*>;
template <class T>
using CVec = Kokkos::View<const T*>;

template <class T>
KOKKOS_INLINE_FUNCTION T activate(T v, Act a) {
  if (a == Act::relu) return v > T(0) ? v : T(0);
  if (a == Act::sigmoid) return T(1) / (T(1) + sp::kx::exp(-v));
  return v;
}

}  // namespace sp::conv
