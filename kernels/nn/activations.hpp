#pragma once
// Element-wise activations and their derivatives, evaluated in the type T.
// GeLU in the tanh form (Hendrycks & Gimpel 2016; Megatron-LM's bias_gelu):
//   gelu(z)  = z/2 (1 + tanh(k (z + c z^3))),  k = sqrt(2/pi), c = 0.044715
//   gelu'(z) = (1 + t)/2 + f (1 - t^2),  f = z/2 k (1 + 3 c z^2)
// ReLU and its derivative as a mask (zero where the forward output is not
// positive; a NaN output passes its gradient through as NaN).
// FLOPs are negligible next to the GEMMs; each costs one pass over memory.
// Bounds: reference/modelparallel/bounded.hpp and reference/dataparallel
// derive the evaluation error of these exact formulas (6 roundings in the
// polynomial, tanh within 2 ulp).
// The element-wise passes take any storage type S: evaluated in AccOf<S>
// (fp32 for 16-bit storage) on widened operands, each result rounded once
// into S; for fp32 and fp64 the same expressions as before, bit for bit.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "kernels/nn/gemm.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::nn {

constexpr double kGeluK = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kGeluC = 0.044715;

template <class T>
KOKKOS_INLINE_FUNCTION T gelu(T z) {
  return T(0.5) * z * (T(1) + sp::kx::tanh(T(kGeluK) * (z + T(kGeluC) * z * z * z)));
}
template <class T>
KOKKOS_INLINE_FUNCTION T gelu_grad(T z) {
  const T t = sp::kx::tanh(T(kGeluK) * (z + T(kGeluC) * z * z * z));
  return T(0.5) * (T(1) + t) + (T(0.5) * z * T(kGeluK) * (T(1) + T(3) * T(kGeluC) * z * z)) * (T(1) - t * t);
}

// y = gelu(z) over n elements (y may be z).
template <class S>
void gelu_forward(const S* z, S* y, int64_t n) {
  Kokkos::parallel_for(
      "nn_gelu", Kokkos::RangePolicy<>(0, n),
      KOKKOS_LAMBDA(const int64_t i) { y[i] = store_as<S>(gelu(load(z[i])), 0); });
}

// dz = dy * gelu'(z) (dz may be dy).
template <class S>
void gelu_backward(const S* z, const S* dy, S* dz, int64_t n) {
  Kokkos::parallel_for(
      "nn_gelu_grad", Kokkos::RangePolicy<>(0, n),
      KOKKOS_LAMBDA(const int64_t i) { dz[i] = store_as<S>(load(dy[i]) * gelu_grad(load(z[i])), 0); });
}

// y = max(x, 0) in place (NaN passes through), any storage type.
template <class S>
void relu_forward(S* x, int64_t n) {
  Kokkos::parallel_for(
      "nn_relu", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(const int64_t i) {
        if (load(x[i]) < 0) x[i] = store_as<S>(typename AccOf<S>::type(0), 0);
      });
}

// dx = dy where the forward output y is positive, else 0 (ReLU's
// derivative; dx may be dy).
template <class S, class SY>
void relu_backward(const SY* y, const S* dy, S* dx, int64_t n) {
  Kokkos::parallel_for(
      "nn_relu_grad", Kokkos::RangePolicy<>(0, n),
      KOKKOS_LAMBDA(const int64_t i) { dx[i] = load(y[i]) > 0 ? dy[i] : store_as<S>(typename AccOf<S>::type(0), 0); });
}

// y = a + b (residual connections; y may alias either).
template <class S>
void add(const S* a, const S* b, S* y, int64_t n) {
  Kokkos::parallel_for(
      "nn_add", Kokkos::RangePolicy<>(0, n),
      KOKKOS_LAMBDA(const int64_t i) { y[i] = store_as<S>(load(a[i]) + load(b[i]), 0); });
}

// x *= s.
template <class T>
void scale(T* x, T s, int64_t n) {
  Kokkos::parallel_for(
      "nn_scale", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(const int64_t i) { x[i] *= s; });
}

}  // namespace sp::nn
