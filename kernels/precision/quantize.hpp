#pragma once
// Symmetric absmax int8 quantization (docs/precision.md "Quantization",
// BMInf): scale = max|x| / 127 over a group (the whole tensor, a row or a
// column), q = round(x / scale) clamped to [-127, 127], x ~ q * scale.
// Defined edge cases: a group that is all zeros gets scale 0 and q = 0
// (dequantizes to exactly 0); NaN or Inf in the input is refused with an
// InputError (its absmax would poison the whole group's scale); a given
// scale must be finite and > 0.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "kernels/precision/loss_scaler.hpp"
#include "scaleproof/params.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::precision {

enum class QuantAxis { tensor, row, column };  // which elements share a scale

template <class T>
using Mat = Kokkos::View<T**, Kokkos::LayoutRight>;

struct Quantized {
  Mat<int8_t> q;
  Kokkos::View<float*> scale;  // 1, rows or columns entries
  QuantAxis axis;
};

KOKKOS_INLINE_FUNCTION int scale_index(QuantAxis a, int i, int j) {
  return a == QuantAxis::tensor ? 0 : a == QuantAxis::row ? i : j;
}

// Round half away from zero, exact for |t| < 2^23 (t - trunc(t) is exact there).
KOKKOS_INLINE_FUNCTION int round_half_away(float t) {
  int r = static_cast<int>(t);
  const float frac = t - static_cast<float>(r);
  if (frac >= 0.5f) ++r;
  if (frac <= -0.5f) --r;
  return r;
}

inline void require_finite(const Mat<const float>& x, const char* what) {
  const int64_t bad = count_nonfinite<float>(Kokkos::View<const float*>(x.data(), x.size()));
  if (bad) throw sp::InputError(std::string("quantize: ") + what + " has " + std::to_string(bad) + " NaN/Inf value(s)");
}

// Absmax scales: max|x| / 127 per group.
SP_UNIT_LOCAL inline Kokkos::View<float*> absmax_scales(const Mat<const float>& x, QuantAxis axis) {
  const int M = int(x.extent(0)), N = int(x.extent(1));
  const int groups = axis == QuantAxis::tensor ? 1 : axis == QuantAxis::row ? M : N;
  Kokkos::View<float*> s("scale", groups);
  // One work item per group, plain loop inside: Max over floats works on every back end.
  Kokkos::parallel_for(
      "absmax", groups, KOKKOS_LAMBDA(const int g) {
        float m = 0;
        const int i0 = axis == QuantAxis::row ? g : 0, i1 = axis == QuantAxis::row ? g + 1 : M;
        const int j0 = axis == QuantAxis::column ? g : 0, j1 = axis == QuantAxis::column ? g + 1 : N;
        for (int i = i0; i < i1; ++i)
          for (int j = j0; j < j1; ++j) {
            const float a = x(i, j) < 0 ? -x(i, j) : x(i, j);
            m = a > m ? a : m;
          }
        s(g) = m / 127.0f;
      });
  return s;
}

SP_UNIT_LOCAL inline Quantized quantize_with_scales(const Mat<const float>& x, QuantAxis axis,
                                                    Kokkos::View<float*> scale) {
  require_finite(x, "input");
  auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), scale);
  for (size_t g = 0; g < hs.extent(0); ++g)
    if (!std::isfinite(hs(g)) || hs(g) < 0) throw sp::InputError("quantize: scale must be finite and >= 0");
  Quantized out{Mat<int8_t>("q", x.extent(0), x.extent(1)), scale, axis};
  auto q = out.q;
  Kokkos::parallel_for(
      "quantize", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {int64_t(x.extent(0)), int64_t(x.extent(1))}),
      KOKKOS_LAMBDA(const int64_t i, const int64_t j) {
        const float s = scale(scale_index(axis, int(i), int(j)));
        int r = s > 0 ? round_half_away(x(i, j) / s) : 0;  // scale 0: an all-zero group
        r = r > 127 ? 127 : (r < -127 ? -127 : r);
        q(i, j) = static_cast<int8_t>(r);
      });
  return out;
}

inline Quantized quantize(const Mat<const float>& x, QuantAxis axis) {
  require_finite(x, "input");
  return quantize_with_scales(x, axis, absmax_scales(x, axis));
}

// C = (sa sb) * acc: the int32 accumulators of qa qb back to fp32. A's
// scale follows its rows (or is per tensor), B's its columns.
SP_UNIT_LOCAL inline void rescale(const Mat<const int32_t>& acc, const Quantized& a, const Quantized& b,
                                  const Mat<float>& c) {
  auto sa = a.scale, sb = b.scale;
  const QuantAxis ax = a.axis, bx = b.axis;
  Kokkos::parallel_for(
      "rescale", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {int64_t(c.extent(0)), int64_t(c.extent(1))}),
      KOKKOS_LAMBDA(const int64_t i, const int64_t j) {
        c(i, j) = (sa(scale_index(ax, int(i), 0)) * sb(scale_index(bx, 0, int(j)))) * static_cast<float>(acc(i, j));
      });
}

}  // namespace sp::precision
