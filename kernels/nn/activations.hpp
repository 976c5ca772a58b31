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
#include <type_traits>

#include "kernels/nn/gemm.hpp"
#include "kernels/nn/tanh_f32.hpp"
#include "kernels/nn/tanh_f64.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::nn {

constexpr double kGeluK = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kGeluC = 0.044715;

// tanh in T, inlined so that the element-wise passes vectorise: for float
// tanh_f32.hpp (within 1 ulp), for double tanh_f64.hpp (within 4u relative,
// the bound the fp64 references assume).
template <class T>
KOKKOS_INLINE_FUNCTION T tanh_of(T x) {
  if constexpr (std::is_same<T, float>::value)
    return tanh_f32(x);
  else if constexpr (std::is_same<T, double>::value)
    return tanh_f64(x);
  else
    return sp::kx::tanh(x);
}

template <class T>
KOKKOS_INLINE_FUNCTION T gelu(T z) {
  return T(0.5) * z * (T(1) + tanh_of(T(kGeluK) * (z + T(kGeluC) * z * z * z)));
}
template <class T>
KOKKOS_INLINE_FUNCTION T gelu_grad(T z) {
  const T t = tanh_of(T(kGeluK) * (z + T(kGeluC) * z * z * z));
  return T(0.5) * (T(1) + t) + (T(0.5) * z * T(kGeluK) * (T(1) + T(3) * T(kGeluC) * z * z)) * (T(1) - t * t);
}

// f(i) for i in [0, n), each element independent of the others. On a host
// back end in blocks whose inner loop the compiler vectorises (the same
// arithmetic per element, so the same bits as one element at a time); on a
// device one element per thread.
template <class F>
SP_UNIT_LOCAL void for_each_element(const char* name, int64_t n, const F& f) {
  if constexpr (kHostMemory) {
    constexpr int64_t kBlock = 512;
    Kokkos::parallel_for(
        name, Kokkos::RangePolicy<>(0, (n + kBlock - 1) / kBlock), KOKKOS_LAMBDA(const int64_t b) {
          const int64_t lo = b * kBlock, hi = lo + kBlock < n ? lo + kBlock : n;
#pragma omp simd
          for (int64_t i = lo; i < hi; ++i) f(i);
        });
  } else {
    Kokkos::parallel_for(name, Kokkos::RangePolicy<>(0, n), f);
  }
}

// y = gelu(z) over n elements (y may be z).
template <class S>
SP_UNIT_LOCAL void gelu_forward(const S* z, S* y, int64_t n) {
  for_each_element(
      "nn_gelu", n, KOKKOS_LAMBDA(const int64_t i) { y[i] = store_as<S>(gelu(load(z[i])), 0); });
}

// dz = dy * gelu'(z) (dz may be dy).
template <class S>
SP_UNIT_LOCAL void gelu_backward(const S* z, const S* dy, S* dz, int64_t n) {
  for_each_element(
      "nn_gelu_grad", n,
      KOKKOS_LAMBDA(const int64_t i) { dz[i] = store_as<S>(load(dy[i]) * gelu_grad(load(z[i])), 0); });
}

// y = max(x, 0) in place (NaN passes through), any storage type.
template <class S>
SP_UNIT_LOCAL void relu_forward(S* x, int64_t n) {
  // Every element is stored (its own value where it is kept), so that the
  // loop has no branch.
  for_each_element(
      "nn_relu", n, KOKKOS_LAMBDA(const int64_t i) {
        const S v = x[i];
        x[i] = load(v) < 0 ? store_as<S>(typename AccOf<S>::type(0), 0) : v;
      });
}

// dx = dy where the forward output y is positive, else 0 (ReLU's
// derivative; dx may be dy).
template <class S, class SY>
SP_UNIT_LOCAL void relu_backward(const SY* y, const S* dy, S* dx, int64_t n) {
  for_each_element(
      "nn_relu_grad", n, KOKKOS_LAMBDA(const int64_t i) {
        const S g = dy[i];  // loaded unconditionally: no branch in the loop
        dx[i] = load(y[i]) > 0 ? g : store_as<S>(typename AccOf<S>::type(0), 0);
      });
}

// y = a + b (residual connections; y may alias either).
template <class S>
SP_UNIT_LOCAL void add(const S* a, const S* b, S* y, int64_t n) {
  for_each_element(
      "nn_add", n, KOKKOS_LAMBDA(const int64_t i) { y[i] = store_as<S>(load(a[i]) + load(b[i]), 0); });
}

// x *= s.
template <class T>
SP_UNIT_LOCAL void scale(T* x, T s, int64_t n) {
  Kokkos::parallel_for(
      "nn_scale", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(const int64_t i) { x[i] *= s; });
}

}  // namespace sp::nn
