#pragma once
// The element-wise rate of the hybrid step's layers: bytes per second of one
// block's element-wise passes on one micro-batch, forward and backward - two
// layer norms, GeLU, two residual adds, and their backward passes with the
// layer-norm parameter gradients added in - in the storage type, on the
// layer library the step runs (kernels/nn). The bytes are the cost model's
// count of those passes (block_elementwise_elems with no softmax elements:
// softmax runs inside the attention core), so the planner's time model
// charges its element-wise bytes at the rate its own layers reach at the
// step's shape rather than at the STREAM triad's. The time is the
// measurement service's (per_call_seconds: called back to back, fenced,
// median of three runs); this rank's, not a collective.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "kernels/hybrid/block.hpp"
#include "kernels/hybrid/cost_model.hpp"
#include "kernels/nn/activations.hpp"
#include "kernels/nn/layernorm.hpp"
#include "scaleproof/measure.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::hybrid {

inline constexpr const char* kElementwiseRateCounter = "elementwise_bytes_per_s";

// Distinct values (rows of nonzero variance), rounded once into T.
template <class T>
SP_UNIT_LOCAL void elementwise_fill(Kokkos::View<T*> v, int mod) {
  Kokkos::parallel_for(
      "ew_fill", Kokkos::RangePolicy<>(0, v.size()),
      KOKKOS_LAMBDA(const size_t i) { v(i) = nn::store_as<T>(float(i % size_t(mod)) * 0.125f - 1.0f, 0); });
}

// n rows of width h, local MLP width fl, storage type T.
template <class T>
double elementwise_rate(int n, int h, int fl) {
  using A = typename nn::AccOf<T>::type;
  const size_t nh = size_t(n) * h, nf = size_t(n) * fl;
  Kokkos::View<T*> x("ew_x", nh), y("ew_y", nh), x1("ew_x1", nh), dy("ew_dy", nh), dx("ew_dx", nh);
  Kokkos::View<T*> z("ew_z", nf), hh("ew_h", nf), dz("ew_dz", nf), g("ew_gamma", size_t(h)), b("ew_beta", size_t(h));
  Kokkos::View<A*> mu("ew_mu", size_t(n)), rs("ew_rs", size_t(n)), dn("ew_dnorm", 2 * size_t(h));
  Kokkos::View<A*> gacc("ew_gacc", 2 * size_t(h));
  elementwise_fill(x, 17), elementwise_fill(dy, 13), elementwise_fill(z, 11);
  elementwise_fill(g, 7), elementwise_fill(b, 5);
  Kokkos::fence();
  const A eps = A(kLnEps);
  auto passes = [&] {
    // Forward: LN1, residual add, LN2, GeLU, residual add.
    nn::layernorm_forward<T>(n, h, x.data(), g.data(), b.data(), eps, y.data(), mu.data(), rs.data());
    nn::add(x.data(), y.data(), x1.data(), int64_t(nh));
    nn::layernorm_forward<T>(n, h, x1.data(), g.data(), b.data(), eps, y.data(), mu.data(), rs.data());
    nn::gelu_forward(z.data(), hh.data(), int64_t(nf));
    nn::add(x1.data(), y.data(), y.data(), int64_t(nh));
    // Backward: GeLU's, LN2's (parameter gradients added in), residual add,
    // LN1's, residual add.
    nn::gelu_backward(z.data(), hh.data(), dz.data(), int64_t(nf));
    nn::layernorm_backward<T>(n, h, x1.data(), g.data(), mu.data(), rs.data(), dy.data(), dx.data(), dn.data(),
                              dn.data() + h);
    nn::add(gacc.data(), dn.data(), gacc.data(), 2 * int64_t(h));
    nn::add(dx.data(), dy.data(), dx.data(), int64_t(nh));
    nn::layernorm_backward<T>(n, h, x.data(), g.data(), mu.data(), rs.data(), dx.data(), x1.data(), dn.data(),
                              dn.data() + h);
    nn::add(gacc.data(), dn.data(), gacc.data(), 2 * int64_t(h));
    nn::add(x1.data(), dx.data(), x1.data(), int64_t(nh));
    Kokkos::fence();
  };
  const BlockElementwise e = block_elementwise_elems(n, h, fl, 0);
  const double seconds = per_call_seconds(passes);
  return seconds > 0 ? (e.fwd + e.bwd) * double(sizeof(T)) / seconds : 0.0;
}

}  // namespace sp::hybrid
