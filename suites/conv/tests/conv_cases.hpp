#pragma once
// Layer shapes the convolution kernel tests share: test_conv_check.cpp runs
// them through the tiles of the build's own target, test_conv_avx2.cpp
// through the AVX2 tiles. Each random sequence is fixed by its seed.
#include <random>
#include <utility>

#include "kernels/conv/conv_dispatch.hpp"

namespace sp::conv::cases {

struct Case {
  ConvSpec s;
  int n = 2, h = 9, w = 19;
};

// Shape i of the general kernel's sequence (seed 2027): square and non-square kernels, stride 1-2,
// padding 0..k, groups, C_out around the register tile (a channel tile with spare rows), widths
// from 1 (a block of fewer positions than a tile) to beyond several tiles, and enough channels x
// width that an image splits into several row blocks. False for a shape the general kernel does not
// take (too small for its kernel, or depthwise or pointwise): skip it.
inline bool general_case(std::mt19937& g, int i, Case& c) {
  auto pick = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(g); };
  c = Case{};
  c.n = pick(1, 2);
  c.s.groups = pick(0, 3) ? 1 : pick(2, 3);
  c.s.c_in = c.s.groups * (i % 5 == 0 ? pick(40, 90) : pick(1, 9));
  c.s.c_out = c.s.groups * pick(1, 11);
  c.s.kh = pick(0, 2) ? 3 : pick(1, 5);
  c.s.kw = pick(0, 3) ? c.s.kh : pick(1, 5);
  c.s.stride = pick(0, 3) ? 1 : 2;
  c.s.pad_h = pick(0, c.s.kh), c.s.pad_w = pick(0, 3) ? c.s.pad_h : pick(0, c.s.kw);
  c.h = pick(1, i % 5 == 0 ? 40 : 16), c.w = pick(1, i % 5 == 0 ? 90 : 50);
  if (c.h + 2 * c.s.pad_h < c.s.kh || c.w + 2 * c.s.pad_w < c.s.kw) return false;
  if (direct_path(c.s) != DirectPath::general) return false;
  c.s.bias = pick(0, 1) == 1;
  c.s.act = static_cast<Act>(pick(0, 2));
  return true;
}

// Shape i of the strip GEMM's sequence (seed 2028): a pointwise layer for even i, an im2col layer
// (3x3 or 1x1, with groups) for odd i; K from 1 to beyond one 64-row slice, P from below one strip
// to several (a slid-back last strip), C_out around the row block, every activation, with and
// without bias.
inline Case strip_case(std::mt19937& g, int i) {
  auto pick = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(g); };
  Case c;
  c.n = pick(1, 3);
  const bool im2col = i % 2 == 1;
  c.s.groups = im2col && pick(0, 1) ? 2 : 1;
  c.s.c_in = c.s.groups * pick(1, 80), c.s.c_out = c.s.groups * pick(1, 14);
  if (im2col && pick(0, 1)) c.s.kh = c.s.kw = 3, c.s.pad_h = c.s.pad_w = 1;
  c.h = pick(1, 12), c.w = pick(1, 40);
  c.s.bias = pick(0, 1) == 1;
  c.s.act = static_cast<Act>(pick(0, 2));
  return c;
}

// The 3x3 stride-1 depthwise layers with one column of padding, which run masked strips from
// column 0 to W (conv_depthwise.hpp, dw_plane3_padded): every width from 1 to 70 takes each of
// their layouts (too narrow for them, whole strips only, a half-width last strip, a slid-back last
// strip), with planes of one row block (cut at both ends), of several, of fewer rows than a block,
// and row padding 0, 1 and 2 (runtime-cut blocks). f(i, w, h, pad_h) for each, i counting from 0.
template <class F>
void each_padded_layout(F&& f) {
  int i = 0;
  for (int w = 1; w <= 70; ++w)
    for (auto [h, pad_h] : {std::pair{1, 1}, {7, 1}, {9, 0}, {8, 2}, {14, 1}, {17, 1}}) f(i++, w, h, pad_h);
}

// Layout i of each_padded_layout as a layer: C = g = 2, bias and activation cycling with i.
inline Case padded_depthwise_case(int i, int w, int h, int pad_h) {
  Case c;
  c.n = 1 + i % 2, c.h = h, c.w = w;
  c.s.c_in = c.s.c_out = c.s.groups = 2;
  c.s.kh = c.s.kw = 3, c.s.pad_h = pad_h, c.s.pad_w = 1;
  c.s.bias = i % 3 == 0, c.s.act = static_cast<Act>(i % 3);
  return c;
}

}  // namespace sp::conv::cases
