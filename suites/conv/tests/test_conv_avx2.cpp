// The convolution kernels' AVX2 tiles (host_avx2.hpp users: the strip GEMM's 6 x 16 fp32 and
// 6 x 8 fp64 tile, the direct path's 4-channel x 3-vector tile, the depthwise 3x3 padded strip and
// its streamed stores) against the reference and its bound. A native build on an AVX-512 host
// compiles the AVX-512 tiles and none of these; this unit is compiled without AVX-512
// (suites/conv/family.cmake) and links no family code, so the kernels it calls are instantiated
// here, with the AVX2 tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "kernels/conv/conv_dispatch.hpp"
#include "kernels/conv/conv_im2col.hpp"
#include "reference/conv/conv_ref.hpp"
#include "scaleproof/compare.hpp"
#include "suites/conv/fill_values.hpp"
#include "suites/conv/tests/conv_cases.hpp"

#ifndef SP_HOST_AVX2
#error "this unit is compiled for AVX2 and FMA without AVX-512 (suites/conv/family.cmake)"
#endif

namespace {

using namespace sp::conv;

using cases::Case;

enum class Path { dispatch, im2col, depthwise_streamed };

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
  const auto hx = fill_values<T>(int64_t(c.n) * s.c_in * c.h * c.w, 3, 1.0);
  auto hw = fill_values<T>(s.weight_count(), 5, double(s.macs_per_output()));
  const auto hb = s.bias ? fill_values<T>(s.c_out, 7, 4.0) : std::vector<T>{};
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
  return describe(c.s) + " N=" + std::to_string(c.n) + " H=" + std::to_string(c.h) + " W=" + std::to_string(c.w);
}

// The general kernel on the shapes of cases::general_case (three in four at stride 1: the vector
// path's 4-channel tiles with spare rows, one position to several 24-position tiles across row ends,
// several row blocks).
template <class T>
void direct_tiles() {
  std::mt19937 g(2027);
  int checked = 0;
  for (int i = 0; i < 60; ++i) {
    Case c;
    if (!cases::general_case(g, i, c)) continue;
    const auto r = compare<T>(c, Path::dispatch);
    EXPECT_TRUE(r.passed()) << shape(c) << ", " << r.wrong << " wrong";
    ++checked;
  }
  EXPECT_GT(checked, 40);
}
TEST(ConvAvx2, DirectTilesPassOnRandomShapesFp32) { direct_tiles<float>(); }
TEST(ConvAvx2, DirectTilesPassOnRandomShapesFp64) { direct_tiles<double>(); }

// The strip GEMM's 6-row tile (pointwise and im2col) on the shapes of cases::strip_case.
template <class T>
void strip_tiles() {
  std::mt19937 g(2028);
  for (int i = 0; i < 40; ++i) {
    const Case c = cases::strip_case(g, i);
    const bool im2col = i % 2 == 1;
    if (!im2col) ASSERT_EQ(direct_path(c.s), DirectPath::pointwise);
    const auto r = compare<T>(c, im2col ? Path::im2col : Path::dispatch);
    EXPECT_TRUE(r.passed()) << (im2col ? "im2col " : "pointwise ") << shape(c) << ", " << r.wrong << " wrong";
  }
}
TEST(ConvAvx2, StripTilesPassOnRandomShapesFp32) { strip_tiles<float>(); }
TEST(ConvAvx2, StripTilesPassOnRandomShapesFp64) { strip_tiles<double>(); }

// The depthwise 3x3 padded strips (fp32: intrinsics) on cases::each_padded_layout, with cached
// and with streamed stores.
TEST(ConvAvx2, DepthwisePaddedStripsPassCachedAndStreamed) {
  cases::each_padded_layout([](int i, int w, int h, int pad_h) {
    const Case c = cases::padded_depthwise_case(i, w, h, pad_h);
    ASSERT_EQ(direct_path(c.s), DirectPath::depthwise);
    for (Path p : {Path::dispatch, Path::depthwise_streamed}) {
      const auto r = compare<float>(c, p);
      EXPECT_TRUE(r.passed()) << (p == Path::dispatch ? "cached " : "streamed ") << shape(c) << ", " << r.wrong
                              << " wrong";
    }
  });
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
