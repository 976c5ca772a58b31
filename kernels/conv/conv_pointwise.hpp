#pragma once
// Pointwise (1 x 1, stride 1, no padding, one group) convolution as one GEMM
// per image: out[n] (C_out x HW) = W (C_out x C_in) * in[n] (C_in x HW),
// all three row-major as they lie in memory (NCHW activations, OIHW
// weights), with bias and activation fused into the store: the strip GEMM
// of conv_gemm_strips.hpp with M = C_out, K = C_in, P = HW, one group.
// One source for every back end.
#include <Kokkos_Core.hpp>

#include "kernels/conv/conv_gemm_strips.hpp"
#include "kernels/conv/conv_views.hpp"

namespace sp::conv {

// The pointwise kernel applies to a 1 x 1, stride 1, unpadded, ungrouped layer.
inline bool pointwise_applies(const ConvSpec& s) {
  return s.kh == 1 && s.kw == 1 && s.stride == 1 && s.pad_h == 0 && s.pad_w == 0 && s.groups == 1;
}

// out = act(W * in + b) per image; requires pointwise_applies(s). b may be
// empty when !s.bias. Shapes must already be validated (conv::validate).
template <class T, class Space = Kokkos::DefaultExecutionSpace>
void conv2d_pointwise(const ConvSpec& s, CTensor<T> in, CTensor<T> w, CVec<T> b, Tensor<T> out) {
  const int N = static_cast<int>(in.extent(0));
  const int HW = static_cast<int>(in.extent(2)) * static_cast<int>(in.extent(3));
  StripGemm d;
  d.M = s.c_out, d.K = s.c_in, d.P = HW;
  d.x_n = int64_t(s.c_in) * HW, d.y_n = int64_t(s.c_out) * HW;
  strip_gemm<T, Space>("conv2d_pointwise", N, d, w.data(), in.data(), s.bias ? b.data() : nullptr, out.data(), s.act);
}

}  // namespace sp::conv
