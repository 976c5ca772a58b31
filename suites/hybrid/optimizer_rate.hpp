#pragma once
// The optimizer phase's rate: bytes per second of the kernels the composed
// step runs after its schedule (kernels/hybrid/step.cpp, optimizer()) over
// one rank's elements - with 16-bit storage the gradients' unscaling and
// inf/NaN count, Adam (on the fp32 master with 16-bit storage), the rounded
// working copy, and the gradients' zero fill - on the layer library the
// step runs (kernels/nn). The bytes are the cost model's count of those
// kernels (optimizer_phase_bytes), so the planner charges the phase at the
// rate these kernels reach over arrays of the rank's size, which stream
// from memory, rather than at the rate of the layers' passes over one
// micro-batch. The time is the measurement service's (per_call_seconds);
// this rank's, not a collective. The collectives of the phase are the
// data-parallel group's alpha-beta-gamma term, not part of this rate.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

#include "kernels/hybrid/cost_model.hpp"
#include "kernels/hybrid/step.hpp"
#include "kernels/nn/activations.hpp"
#include "kernels/nn/optim.hpp"
#include "kernels/precision/loss_scaler.hpp"
#include "scaleproof/measure.hpp"
#include "suites/hybrid/block_pass_rates.hpp"

namespace sp::hybrid {

inline constexpr const char* kOptimizerRateCounter = "optimizer_bytes_per_s";

// `e.updated` elements Adam updates, `e.grads` gradient elements, storage T.
// The gradients keep their values from call to call (unscaled by 1, a
// separate buffer of their size zero-filled): Adam's moments then stay
// normal numbers however long the timing runs.
template <class T>
double optimizer_rate(const OptimizerElems& e) {
  using A = typename nn::AccOf<T>::type;
  constexpr bool kMixed = !std::is_same<T, A>::value;
  const size_t nu = size_t(e.updated), ng = size_t(e.grads);
  if (nu == 0 || ng < nu) return 0.0;
  Kokkos::View<A*> g("opt_g", ng), zeroed("opt_zeroed", ng), m1("opt_m", nu), m2("opt_v", nu);
  Kokkos::View<A*> master("opt_master", kMixed ? nu : 0);
  Kokkos::View<T*> p("opt_p", nu);
  elementwise_fill(g, 13), elementwise_fill(p, 17);
  if constexpr (kMixed) elementwise_fill(master, 17);
  Kokkos::fence();
  const nn::AdamConfig adam;
  int t = 0;
  auto phase = [&] {
    if constexpr (kMixed) {
      nn::scale(g.data(), A(1), int64_t(ng));
      Kokkos::fence();
      precision::count_nonfinite<A>(g);
    }
    ++t;
    if constexpr (kMixed) {
      nn::adam_update<float>(master.data(), g.data(), m1.data(), m2.data(), nu, adam, t);
      nn::cast_to<T>(master.data(), p.data(), nu);
    } else {
      nn::adam_update<T>(p.data(), g.data(), m1.data(), m2.data(), nu, adam, t);
    }
    Kokkos::deep_copy(zeroed, A(0));
    Kokkos::fence();
  };
  const double seconds = per_call_seconds(phase);
  return seconds > 0 ? optimizer_phase_bytes(e, storage_of<T>()) / seconds : 0.0;
}

}  // namespace sp::hybrid
