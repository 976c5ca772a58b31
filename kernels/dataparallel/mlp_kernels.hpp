#pragma once
// Kokkos forward and backward kernels of one MLP layer (shape and layout in
// mlp_shape.hpp). A layer's parameters arrive as one block (W then b) so the
// same kernels run on the full parameter vector (DDP, ZeRO-1/2) and on a
// freshly all-gathered layer buffer (ZeRO-3). Activations are row-major
// (batch x features). Every dot product accumulates in a fixed order in T;
// the reference bounds the rounding of any order (reference/dataparallel).
#include <Kokkos_Core.hpp>

#include "kernels/dataparallel/mlp_shape.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::dp {

template <class T>
using Vec = Kokkos::View<T*>;  // default memory space
template <class T>
using CVec = Kokkos::View<const T*>;
// Unowned spans of a buffer (an offset into a parameter or gradient vector).
template <class T>
using DevSpan = Kokkos::View<T*, Kokkos::DefaultExecutionSpace::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using HostSpan = Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class T>
KOKKOS_INLINE_FUNCTION T gelu(T z) {
  const T k = T(kGeluK), c = T(kGeluC);
  return T(0.5) * z * (T(1) + sp::kx::tanh(k * (z + c * z * z * z)));
}

template <class T>
KOKKOS_INLINE_FUNCTION T gelu_grad(T z) {
  const T k = T(kGeluK), c = T(kGeluC);
  const T t = sp::kx::tanh(k * (z + c * z * z * z));
  return T(0.5) * (T(1) + t) + T(0.5) * z * (T(1) - t * t) * k * (T(1) + T(3) * c * z * z);
}

// Rows [lo, hi) of a kernel's outer index: the trainer runs the backward (and
// ZeRO-3's forward) in slices and lets communication progress between them.
struct Rows {
  int lo, hi;
};

// Z = A W^T + b; Aout = gelu(Z) (hidden layers) or Z (output layer), for samples in rows.
template <class T>
void layer_forward(CVec<T> P, CVec<T> A, Vec<T> Z, Vec<T> Aout, Rows rows, int din, int dout, bool hidden) {
  Kokkos::parallel_for(
      "dp_forward", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({rows.lo, 0}, {rows.hi, dout}), KOKKOS_LAMBDA(int b, int j) {
        T z = P(static_cast<size_t>(dout) * din + j);
        for (int k = 0; k < din; ++k) z += P(static_cast<size_t>(j) * din + k) * A(static_cast<size_t>(b) * din + k);
        Z(static_cast<size_t>(b) * dout + j) = z;
        Aout(static_cast<size_t>(b) * dout + j) = hidden ? gelu(z) : z;
      });
}

// dY = (Y - target) / B_global: the gradient of the global mean loss, so that
// summing the ranks' gradients gives the full-batch gradient.
template <class T>
void loss_grad(CVec<T> Y, CVec<T> target, Vec<T> dY, int global_batch) {
  const T inv = T(1) / T(global_batch);
  Kokkos::parallel_for("dp_loss_grad", Y.extent(0), KOKKOS_LAMBDA(size_t i) { dY(i) = (Y(i) - target(i)) * inv; });
}

// G (the layer's gradient block, overwritten) = [dZ^T A, sum_b dZ] over the local
// batch, for the output features j in rows.
template <class T>
void layer_weight_grad(CVec<T> dZ, CVec<T> A, Vec<T> G, int batch, int din, int dout, Rows rows) {
  Kokkos::parallel_for(
      "dp_dW", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({rows.lo, 0}, {rows.hi, din + 1}), KOKKOS_LAMBDA(int j, int k) {
        T s = 0;
        if (k < din) {
          for (int b = 0; b < batch; ++b) s += dZ(static_cast<size_t>(b) * dout + j) * A(static_cast<size_t>(b) * din + k);
          G(static_cast<size_t>(j) * din + k) = s;
        } else {
          for (int b = 0; b < batch; ++b) s += dZ(static_cast<size_t>(b) * dout + j);
          G(static_cast<size_t>(dout) * din + j) = s;
        }
      });
}

// dZprev = (dZ W) .* gelu'(Zprev): the gradient flowing into the previous hidden
// layer, for samples in rows.
template <class T>
void layer_input_grad(CVec<T> P, CVec<T> dZ, CVec<T> Zprev, Vec<T> dZprev, Rows rows, int din, int dout) {
  Kokkos::parallel_for(
      "dp_dA", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({rows.lo, 0}, {rows.hi, din}), KOKKOS_LAMBDA(int b, int k) {
        T s = 0;
        for (int j = 0; j < dout; ++j) s += P(static_cast<size_t>(j) * din + k) * dZ(static_cast<size_t>(b) * dout + j);
        dZprev(static_cast<size_t>(b) * din + k) = s * gelu_grad(Zprev(static_cast<size_t>(b) * din + k));
      });
}

// Adam on n elements: theta -= lr * mhat / (sqrt(vhat) + eps), step t >= 1.
// Exec selects where it runs (the default space, or the host for offload);
// the pointers must be accessible from it.
template <class T, class Exec = Kokkos::DefaultExecutionSpace>
void adam_update(T* theta, const T* g, T* m, T* v, size_t n, const AdamConfig& c, int t) {
  const T lr = T(c.lr), b1 = T(c.beta1), b2 = T(c.beta2), eps = T(c.eps);
  const T c1 = T(1) - T(std::pow(b1, t)), c2 = T(1) - T(std::pow(b2, t));
  Kokkos::parallel_for(
      "dp_adam", Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(size_t i) {
        const T gi = g[i];
        const T mi = b1 * m[i] + (T(1) - b1) * gi;
        const T vi = b2 * v[i] + (T(1) - b2) * gi * gi;
        m[i] = mi, v[i] = vi;
        theta[i] -= lr * (mi / c1) / (sp::kx::sqrt(vi / c2) + eps);
      });
}

}  // namespace sp::dp
