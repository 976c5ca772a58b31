#pragma once
// The project's convolution: the specialised kernel where one applies, the
// general direct kernel otherwise.
//   depthwise (groups = C_in = C_out), any k, stride, padding -> conv_depthwise.hpp
//   1 x 1, stride 1, unpadded, one group                      -> conv_pointwise.hpp (a GEMM per image)
//   everything else                                           -> conv_direct.hpp
#include "kernels/conv/conv_depthwise.hpp"
#include "kernels/conv/conv_direct.hpp"
#include "kernels/conv/conv_pointwise.hpp"

namespace sp::conv {

enum class DirectPath { depthwise, pointwise, general };

inline DirectPath direct_path(const ConvSpec& s) {
  if (depthwise_applies(s)) return DirectPath::depthwise;
  if (pointwise_applies(s)) return DirectPath::pointwise;
  return DirectPath::general;
}

inline const char* to_string(DirectPath p) {
  return p == DirectPath::depthwise ? "depthwise" : p == DirectPath::pointwise ? "pointwise" : "general";
}

// out = act(conv(in, w) + b): same contract as conv2d_direct.
template <class T, class Space = Kokkos::DefaultExecutionSpace>
void conv2d_dispatch(const ConvSpec& s, CTensor<T> in, CTensor<T> w, CVec<T> b, Tensor<T> out) {
  switch (direct_path(s)) {
    case DirectPath::depthwise: conv2d_depthwise<T, Space>(s, in, w, b, out); break;
    case DirectPath::pointwise: conv2d_pointwise<T, Space>(s, in, w, b, out); break;
    case DirectPath::general: conv2d_direct<T, Space>(s, in, w, b, out); break;
  }
}

}  // namespace sp::conv
