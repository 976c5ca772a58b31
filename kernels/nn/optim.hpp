#pragma once
// Optimizer updates, element-wise (2 to 12 FLOPs per parameter):
//  - Adam (Kingma & Ba 2015): m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
//    theta -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps), step t >= 1;
//  - SGD on fp32 master weights with a scaled gradient in any storage type:
//    master -= f g (f = lr / loss scale), and the working copy re-rounded.
// Each element is updated by the same expression in the same order as the
// plain-loop references (reference/nn), so the results are bitwise equal.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstddef>

#include "kernels/nn/gemm.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::nn {

// Hyper-parameters, rounded to the training type T where they are used, so
// that kernel and reference use the same constants.
struct AdamConfig {
  double lr = 1e-2, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

// Adam on n elements. Exec selects where it runs (the default space, or the
// host for an offloaded optimizer); the pointers must be accessible from it.
template <class T, class Exec = Kokkos::DefaultExecutionSpace>
SP_UNIT_LOCAL void adam_update(T* theta, const T* g, T* m, T* v, size_t n, const AdamConfig& c, int t) {
  const T lr = T(c.lr), b1 = T(c.beta1), b2 = T(c.beta2), eps = T(c.eps);
  const T c1 = T(1) - T(std::pow(b1, t)), c2 = T(1) - T(std::pow(b2, t));
  Kokkos::parallel_for(
      "nn_adam", Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(size_t i) {
        const T gi = g[i];
        const T mi = b1 * m[i] + (T(1) - b1) * gi;
        const T vi = b2 * v[i] + (T(1) - b2) * gi * gi;
        m[i] = mi, v[i] = vi;
        theta[i] -= lr * (mi / c1) / (sp::kx::sqrt(vi / c2) + eps);
      });
}

// master -= f g (g in any storage type, widened to fp32).
template <class S>
SP_UNIT_LOCAL void sgd_update(float* master, const S* g, float f, size_t n) {
  Kokkos::parallel_for(
      "nn_sgd", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(size_t i) { master[i] -= f * load(g[i]); });
}

// w = master rounded into w's storage type (the working copy).
template <class S>
SP_UNIT_LOCAL void cast_to(const float* master, S* w, size_t n) {
  Kokkos::parallel_for(
      "nn_cast", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(size_t i) { w[i] = store_as<S>(master[i], 0); });
}

}  // namespace sp::nn
