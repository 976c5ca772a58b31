// The convolution kernels' AVX2 tiles (host_avx2.hpp users: the strip GEMM's 6 x 16 fp32 and
// 6 x 8 fp64 tile, the direct path's 4-channel x 3-vector tile, the depthwise 3x3 padded strip and
// its streamed stores) against the reference and its bound. A native build on an AVX-512 host
// compiles the AVX-512 tiles and none of these; this unit is compiled without AVX-512
// (suites/conv/family.cmake) and links no family code, so the kernels it calls are instantiated
// here, with the AVX2 tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/conv/conv_dispatch.hpp"
#include "kernels/conv/conv_im2col.hpp"
#include "reference/conv/conv_ref.hpp"
#include "scaleproof/compare.hpp"

#ifndef SP_HOST_AVX2
#error "this unit is compiled for AVX2 and FMA without AVX-512 (suites/conv/family.cmake)"
#endif

namespace {

using namespace sp::conv;

struct Case {
  ConvSpec s;
  int n = 1, h = 1, w = 1;
};

enum class Path { dispatch, im2col, depthwise_streamed };

// Deterministic mixed-sign values in [-1, 1] / sqrt(scale).
template <class T>
std::vector<T> values(int64_t count, uint64_t seed, double scale) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<int> d(-100, 100);
  std::vector<T> v(count);
  for (auto& x : v) x = static_cast<T>(d(g) / 100.0 / std::sqrt(scale));
  return v;
}

template <class T>
void upload(const std::vector<T>& h, T* dst) {
  Kokkos::deep_copy(
      Kokkos::View<T*, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(dst, h.size()),
      Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(h.data(), h.size()));
}

// The kernel on path p against conv_ref; flip: the reference's weights mirrored along kw (a
// convolution where the kernels correlate: what a wrong kernel would compute), which must fail.
template <class T>
sp::CheckResult compare(const Case& c, Path p, bool flip = false) {
  const ConvSpec& s = c.s;
  const int oh = s.out_h(c.h), ow = s.out_w(c.w);
  const auto hx = values<T>(int64_t(c.n) * s.c_in * c.h * c.w, 3, 1.0);
  auto hw = values<T>(s.weight_count(), 5, double(s.macs_per_output()));
  const auto hb = s.bias ? values<T>(s.c_out, 7, 4.0) : std::vector<T>{};
  Tensor<T> x("x", c.n, s.c_in, c.h, c.w), w("w", s.c_out, s.cin_g(), s.kh, s.kw), y("y", c.n, s.c_out, oh, ow);
  Vec<T> b("b", s.c_out);
  upload(hx, x.data()), upload(hw, w.data());
  if (s.bias) upload(hb, b.data());
  if (p == Path::im2col) {
    Kokkos::View<T**, Kokkos::LayoutRight> col("col", 1, im2col_rows(s) * im2col_cols(s, c.h, c.w));
    conv2d_im2col<T>(s, x, w, b, y, col);
  } else if (p == Path::depthwise_streamed) {
    conv2d_depthwise<T>(s, x, w, b, y, DwStores::streamed);
  } else {
    conv2d_dispatch<T>(s, x, w, b, y);
  }
  Kokkos::fence();
  const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  sp::reference::RefTensor in;
  in.resize(c.n, s.c_in, c.h, c.w);
  std::copy(hx.begin(), hx.end(), in.v.begin());
  if (flip)
    for (size_t k = 0; k + s.kw <= hw.size(); k += s.kw) std::reverse(hw.begin() + k, hw.begin() + k + s.kw);
  const auto ref = sp::reference::conv_ref<T>(s, in, hw, hb, sp::unit_roundoff<T>());
  sp::Comparator cmp("test");
  for (size_t i = 0; i < ref.v.size(); ++i) cmp.add(got.data()[i], static_cast<double>(ref.v[i]), ref.err[i]);
  return cmp.result();
}

std::string shape(const Case& c) {
  const ConvSpec& s = c.s;
  return "C_in=" + std::to_string(s.c_in) + " C_out=" + std::to_string(s.c_out) + " g=" + std::to_string(s.groups) +
         " k=" + std::to_string(s.kh) + "x" + std::to_string(s.kw) + " stride=" + std::to_string(s.stride) +
         " pad=" + std::to_string(s.pad_h) + "," + std::to_string(s.pad_w) + " N=" + std::to_string(c.n) +
         " H=" + std::to_string(c.h) + " W=" + std::to_string(c.w);
}

// The general kernel's stride-1 vector path: channel tiles of 4 with spare rows, widths from one
// position to several 24-position tiles (fp32; 12 fp64) across row ends, several row blocks.
template <class T>
void direct_tiles() {
  std::mt19937 g(2031);
  auto pick = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(g); };
  int checked = 0;
  for (int i = 0; i < 40; ++i) {
    Case c;
    c.n = pick(1, 2);
    c.s.groups = pick(0, 3) ? 1 : 2;
    c.s.c_in = c.s.groups * (i % 5 == 0 ? pick(40, 90) : pick(1, 9));
    c.s.c_out = c.s.groups * pick(1, 10);
    c.s.kh = pick(0, 2) ? 3 : pick(1, 5);
    c.s.kw = pick(0, 3) ? c.s.kh : pick(1, 5);
    c.s.pad_h = pick(0, c.s.kh - 1), c.s.pad_w = pick(0, c.s.kw - 1);
    c.h = pick(1, i % 5 == 0 ? 40 : 16), c.w = pick(1, i % 5 == 0 ? 90 : 50);
    if (c.h + 2 * c.s.pad_h < c.s.kh || c.w + 2 * c.s.pad_w < c.s.kw) continue;
    if (direct_path(c.s) != DirectPath::general) continue;
    c.s.bias = pick(0, 1) == 1, c.s.act = static_cast<Act>(pick(0, 2));
    const auto r = compare<T>(c, Path::dispatch);
    EXPECT_TRUE(r.passed()) << shape(c) << ", " << r.wrong << " wrong";
    ++checked;
  }
  EXPECT_GT(checked, 25);
}
TEST(ConvAvx2, DirectTilesPassOnRandomShapesFp32) { direct_tiles<float>(); }
TEST(ConvAvx2, DirectTilesPassOnRandomShapesFp64) { direct_tiles<double>(); }

// The strip GEMM's tile (pointwise and im2col): K across 64-row slices, P from below one 16-wide
// strip to several (a slid-back last strip), C_out around the 6-row block and its 4-row tail.
template <class T>
void strip_tiles() {
  std::mt19937 g(2032);
  auto pick = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(g); };
  for (int i = 0; i < 30; ++i) {
    Case c;
    c.n = pick(1, 3);
    const bool im2col = i % 2 == 1;
    c.s.groups = im2col && pick(0, 1) ? 2 : 1;
    c.s.c_in = c.s.groups * pick(1, 80), c.s.c_out = c.s.groups * pick(1, 14);
    if (im2col && pick(0, 1)) c.s.kh = c.s.kw = 3, c.s.pad_h = c.s.pad_w = 1;
    c.h = pick(1, 12), c.w = pick(1, 40);
    c.s.bias = pick(0, 1) == 1, c.s.act = static_cast<Act>(pick(0, 2));
    if (!im2col) ASSERT_EQ(direct_path(c.s), DirectPath::pointwise);
    const auto r = compare<T>(c, im2col ? Path::im2col : Path::dispatch);
    EXPECT_TRUE(r.passed()) << (im2col ? "im2col " : "pointwise ") << shape(c) << ", " << r.wrong << " wrong";
  }
}
TEST(ConvAvx2, StripTilesPassOnRandomShapesFp32) { strip_tiles<float>(); }
TEST(ConvAvx2, StripTilesPassOnRandomShapesFp64) { strip_tiles<double>(); }

// The depthwise 3x3 stride-1 padded strips (fp32: intrinsics) at every width from 1 to 40, cached
// and streamed stores, row padding 0-2.
TEST(ConvAvx2, DepthwisePaddedStripsPassCachedAndStreamed) {
  int i = 0;
  for (int w = 1; w <= 40; ++w)
    for (auto [h, pad_h] : {std::pair{7, 1}, {9, 0}, {8, 2}, {17, 1}}) {
      Case c;
      c.n = 1 + i % 2, c.h = h, c.w = w;
      c.s.c_in = c.s.c_out = c.s.groups = 3;
      c.s.kh = c.s.kw = 3, c.s.pad_h = pad_h, c.s.pad_w = 1;
      c.s.bias = i % 3 == 0, c.s.act = static_cast<Act>(i % 3);
      ++i;
      ASSERT_EQ(direct_path(c.s), DirectPath::depthwise);
      for (Path p : {Path::dispatch, Path::depthwise_streamed}) {
        const auto r = compare<float>(c, p);
        EXPECT_TRUE(r.passed()) << (p == Path::dispatch ? "cached " : "streamed ") << shape(c) << ", " << r.wrong
                                << " wrong";
      }
    }
}

// The comparison can fail: mirrored weights in the reference fail every path on a 3x3 layer.
TEST(ConvAvx2, MirroredWeightsFailEveryPath) {
  Case c;
  c.n = 2, c.h = 9, c.w = 30;
  c.s.c_in = 5, c.s.c_out = 7, c.s.kh = c.s.kw = 3, c.s.pad_h = c.s.pad_w = 1, c.s.bias = true;
  EXPECT_FALSE(compare<float>(c, Path::dispatch, true).passed());
  EXPECT_FALSE(compare<float>(c, Path::im2col, true).passed());
  Case d = c;
  d.s.c_in = d.s.c_out = d.s.groups = 4;
  EXPECT_FALSE(compare<float>(d, Path::dispatch, true).passed());
  EXPECT_FALSE(compare<float>(d, Path::depthwise_streamed, true).passed());
}

}  // namespace
