#pragma once
// The non-convolution pieces of the composite blocks: residual add (ResNet),
// channel concatenation (DenseNet, Inception, Ghost) with truncation,
// global average pooling and channel scaling (squeeze-and-excitation).
#include <Kokkos_Core.hpp>

#include "kernels/conv/conv_views.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::conv {

// out = act(a + b), same shapes.
template <class T>
SP_UNIT_LOCAL void add_act(CTensor<T> a, CTensor<T> b, Tensor<T> out, Act act) {
  const int64_t n = static_cast<int64_t>(out.size());
  Kokkos::parallel_for(
      "conv_add", Kokkos::RangePolicy<>(0, n),
      KOKKOS_LAMBDA(const int64_t i) { out.data()[i] = activate(a.data()[i] + b.data()[i], act); });
}

// out[:, c0 : c0 + count] = in[:, src0 : src0 + count]: one concatenation piece
// (count < in's channels truncates, as the Ghost module does).
template <class T>
SP_UNIT_LOCAL void copy_channels(CTensor<T> in, int src0, Tensor<T> out, int c0, int count) {
  const int64_t hw = int64_t(in.extent(2)) * in.extent(3);
  const int64_t per_n = count * hw;
  const int cin = static_cast<int>(in.extent(1)), cout = static_cast<int>(out.extent(1));
  Kokkos::parallel_for(
      "conv_concat", Kokkos::RangePolicy<>(0, int64_t(in.extent(0)) * per_n), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t n = i / per_n, rest = i % per_n;
        const int64_t c = rest / hw, p = rest % hw;
        out.data()[(n * cout + c0 + c) * hw + p] = in.data()[(n * cin + src0 + c) * hw + p];
      });
}

// out[n][c][0][0] = mean over the H x W plane of in[n][c].
template <class T>
SP_UNIT_LOCAL void global_avg_pool(CTensor<T> in, Tensor<T> out) {
  const int C = static_cast<int>(in.extent(1));
  const int64_t hw = int64_t(in.extent(2)) * in.extent(3);
  Kokkos::parallel_for(
      "conv_pool", Kokkos::RangePolicy<>(0, int64_t(in.extent(0)) * C), KOKKOS_LAMBDA(const int64_t nc) {
        const T* p = in.data() + nc * hw;
        T s = 0;
        for (int64_t i = 0; i < hw; ++i) s += p[i];
        out.data()[nc] = s / T(hw);
      });
}

// out[n][c] = in[n][c] * scale[n][c][0][0].
template <class T>
SP_UNIT_LOCAL void scale_channels(CTensor<T> in, CTensor<T> scale, Tensor<T> out) {
  const int64_t hw = int64_t(in.extent(2)) * in.extent(3);
  Kokkos::parallel_for(
      "conv_scale", Kokkos::RangePolicy<>(0, static_cast<int64_t>(in.size())),
      KOKKOS_LAMBDA(const int64_t i) { out.data()[i] = in.data()[i] * scale.data()[i / hw]; });
}

}  // namespace sp::conv
