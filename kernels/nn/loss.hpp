#pragma once
// Mean squared error, the loss the training families use. With n outputs in
// the mean, the gradient is c (y - t) with c = 1/B for L = 1/(2B) sum |y - t|^2
// (data parallelism: B the global batch) or c = 2 S / n for
// L = S mean((y - t)^2) (mixed precision: S the loss scale). Each gradient
// element is two roundings (the difference, the product) and one more into
// a narrower storage type; the loss value is a double sum in any order
// (gamma_n sum r^2).
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "kernels/nn/gemm.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::nn {

// d = c (y - t), rounded once into d's storage type.
template <class SY, class ST, class SD, class C>
SP_UNIT_LOCAL void mse_grad(const SY* y, const ST* t, SD* d, int64_t n, C c) {
  Kokkos::parallel_for(
      "nn_mse_grad", Kokkos::RangePolicy<>(0, n),
      KOKKOS_LAMBDA(const int64_t i) { d[i] = store_as<SD>(c * (load(y[i]) - load(t[i])), 0); });
}

// mean((y - t)^2), residuals and sum in double.
template <class SY, class ST>
SP_UNIT_LOCAL double mse_loss(const SY* y, const ST* t, int64_t n) {
  double sum = 0;
  Kokkos::parallel_reduce(
      "nn_mse", Kokkos::RangePolicy<>(0, n),
      KOKKOS_LAMBDA(const int64_t i, double& a) {
        const double r = double(load(y[i])) - double(load(t[i]));
        a += r * r;
      },
      sum);
  return sum / double(n);
}

}  // namespace sp::nn
