#pragma once
// One MLP layer's forward and backward on the shared layer library
// (kernels/nn; shape and layout in mlp_shape.hpp). A layer's parameters
// arrive as one block (W [out x in] then b) so the same kernels run on the
// full parameter vector (DDP, ZeRO-1/2) and on a freshly all-gathered layer
// buffer (ZeRO-3). Activations are row-major (batch x features). The GEMMs
// sum in their own fixed order in T; the reference bounds the rounding of
// any order (reference/dataparallel).
#include <Kokkos_Core.hpp>

#include "kernels/dataparallel/mlp_shape.hpp"
#include "kernels/nn/activations.hpp"
#include "kernels/nn/linear.hpp"
#include "kernels/nn/loss.hpp"
#include "kernels/nn/optim.hpp"

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

// Rows [lo, hi) of a kernel's outer index: the trainer runs the backward (and
// ZeRO-3's forward) in slices and lets communication progress between them.
struct Rows {
  int lo, hi;
};

inline sp::nn::LinearShape linear_shape(int batch, int din, int dout) {
  return {batch, din, dout, sp::nn::Weights::out_in};
}

// Z = A W^T + b; Aout = gelu(Z) (hidden layers) or Z (output layer), for samples in rows.
template <class T>
void layer_forward(CVec<T> P, CVec<T> A, Vec<T> Z, Vec<T> Aout, Rows rows, int din, int dout, bool hidden) {
  const size_t lo = static_cast<size_t>(rows.lo);
  const int n = rows.hi - rows.lo;
  if (n <= 0) return;
  sp::nn::linear_forward(linear_shape(n, din, dout), A.data() + lo * din, P.data(), P.data() + size_t(dout) * din,
                         Z.data() + lo * dout);
  const int64_t len = int64_t(n) * dout;
  if (hidden)
    sp::nn::gelu_forward(Z.data() + lo * dout, Aout.data() + lo * dout, len);
  else
    Kokkos::deep_copy(DevSpan<T>(Aout.data() + lo * dout, len), DevSpan<const T>(Z.data() + lo * dout, len));
}

// dY = (Y - target) / B_global: the gradient of the global mean loss, so that
// summing the ranks' gradients gives the full-batch gradient.
template <class T>
void loss_grad(CVec<T> Y, CVec<T> target, Vec<T> dY, int global_batch) {
  sp::nn::mse_grad(Y.data(), target.data(), dY.data(), int64_t(Y.extent(0)), T(1) / T(global_batch));
}

// G (the layer's gradient block, overwritten) = [dZ^T A, sum_b dZ] over the local
// batch, for the output features j in rows.
template <class T>
void layer_weight_grad(CVec<T> dZ, CVec<T> A, Vec<T> G, int batch, int din, int dout, Rows rows) {
  sp::nn::linear_backward_weight(linear_shape(batch, din, dout), A.data(), dZ.data(), G.data(),
                                 G.data() + size_t(dout) * din, rows.lo, rows.hi);
}

// dZprev = (dZ W) .* gelu'(Zprev): the gradient flowing into the previous hidden
// layer, for samples in rows.
template <class T>
void layer_input_grad(CVec<T> P, CVec<T> dZ, CVec<T> Zprev, Vec<T> dZprev, Rows rows, int din, int dout) {
  const size_t lo = static_cast<size_t>(rows.lo);
  const int n = rows.hi - rows.lo;
  if (n <= 0) return;
  T* out = dZprev.data() + lo * din;
  sp::nn::linear_backward_input(linear_shape(n, din, dout), dZ.data() + lo * dout, P.data(), out);
  sp::nn::gelu_backward(Zprev.data() + lo * din, out, out, int64_t(n) * din);
}

using sp::nn::adam_update;

}  // namespace sp::dp
