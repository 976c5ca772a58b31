#pragma once
// Dynamic loss scaling as torch.amp.GradScaler does it (docs/precision.md "Mixed
// precision"; defaults init_scale 2^16, growth_factor 2, backoff_factor 0.5,
// growth_interval 2000): the loss is multiplied by S before backward; after
// backward the gradients are checked for inf/NaN on the device, and the host
// state machine decides whether the optimizer step runs and what S becomes.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "kernels/precision/float16.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "scaleproof/params.hpp"

namespace sp::precision {

KOKKOS_INLINE_FUNCTION bool finite_f32(float x) {
  // Exponent field all ones = inf or NaN; a bit test works on every back end.
  return (float_bits(x) & 0x7f800000u) != 0x7f800000u;
}
KOKKOS_INLINE_FUNCTION bool finite_f32(fp16_t x) { return (x.bits & 0x7c00u) != 0x7c00u; }
KOKKOS_INLINE_FUNCTION bool finite_f32(bf16_t x) { return (x.bits & 0x7f80u) != 0x7f80u; }

// Number of inf/NaN elements of a gradient buffer (a Sum reduction: works
// with every Kokkos version and back end, unlike Max reducers on half types).
template <class S>
SP_UNIT_LOCAL int64_t count_nonfinite(Kokkos::View<const S*> g) {
  int64_t bad = 0;
  Kokkos::parallel_reduce(
      "count_nonfinite", g.extent(0), KOKKOS_LAMBDA(const int64_t i, int64_t& n) { n += finite_f32(g(i)) ? 0 : 1; },
      bad);
  return bad;
}

struct ScalerConfig {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int growth_interval = 2000;
  bool dynamic = true;  // false: static scaling, S never changes (steps still skip on inf/NaN)
};

class GradScaler {
 public:
  explicit GradScaler(ScalerConfig c = {}) : c_(c), scale_(c.init_scale) {
    if (!(c.init_scale > 0) || !(c.growth_factor > 1) || !(c.backoff_factor > 0 && c.backoff_factor < 1) ||
        c.growth_interval < 1)
      throw sp::InputError("loss scaler: need init_scale > 0, growth > 1, 0 < backoff < 1, interval >= 1");
  }
  double scale() const { return scale_; }
  int growth_tracker() const { return tracker_; }
  // Called once per iteration after the inf/NaN check. Returns whether the
  // optimizer step runs (false = skipped). Mirrors GradScaler.update():
  // an overflow halves S and resets the clean-step count; growth_interval
  // clean steps in a row double S.
  bool update(bool found_inf) {
    if (!c_.dynamic) return !found_inf;
    if (found_inf) {
      scale_ *= c_.backoff_factor;
      tracker_ = 0;
      return false;
    }
    if (++tracker_ == c_.growth_interval) {
      scale_ *= c_.growth_factor;
      tracker_ = 0;
    }
    return true;
  }

 private:
  ScalerConfig c_;
  double scale_;
  int tracker_ = 0;
};

}  // namespace sp::precision
