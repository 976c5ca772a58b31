// The conformance bound must separate a right kernel from a wrong one, and
// bad layer descriptions must be rejected with InputError.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kernels/conv/conv_depthwise.hpp"
#include "reference/conv/conv_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"
#include "suites/conv/conv_technique.hpp"
#include "suites/conv/net_exec.hpp"
#include "suites/conv/tests/conv_cases.hpp"

namespace {

using namespace sp::conv;

using cases::Case;

// Kernel output of the direct back end vs the reference built with weights w_ref.
template <class T = float>
sp::CheckResult compare(const Case& c, bool flip_weights, Backend be = Backend::direct) {
  Net net(c.n, c.s.c_in, c.h, c.w);
  net.conv(0, c.s);
  NetExec<T> ex(net, be, 7);
  Tensor<T> x("x", c.n, c.s.c_in, c.h, c.w);
  const auto hx = fill_values<T>(static_cast<int64_t>(x.size()), 3, 1.0);
  Kokkos::deep_copy(
      x, Kokkos::View<const T****, Kokkos::LayoutRight, Kokkos::HostSpace>(hx.data(), c.n, c.s.c_in, c.h, c.w));
  ex.bind(x);
  ex.run();
  ex.sync_output();
  auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ex.output());
  sp::reference::RefTensor in;
  in.resize(c.n, c.s.c_in, c.h, c.w);
  std::copy(hx.begin(), hx.end(), in.v.begin());
  auto w = ex.host_weights(1);
  if (flip_weights)  // convolution instead of correlation: a classic kernel bug
    for (size_t k = 0; k + c.s.kw <= w.size(); k += c.s.kw) std::reverse(w.begin() + k, w.begin() + k + c.s.kw);
  const auto ref = sp::reference::conv_ref<T>(c.s, in, w, ex.host_bias(1), sp::unit_roundoff<T>());
  sp::Comparator cmp("test");
  for (size_t i = 0; i < ref.v.size(); ++i) cmp.add(got.data()[i], static_cast<double>(ref.v[i]), ref.err[i]);
  return cmp.result();
}

Case case3x3() {
  Case c;
  c.s.c_in = 5, c.s.c_out = 7, c.s.kh = c.s.kw = 3, c.s.pad_h = c.s.pad_w = 1, c.s.bias = true, c.s.act = Act::relu;
  return c;
}

TEST(ConvCheck, RightKernelPassesAndFlippedWeightsFail) {
  for (Backend be : {Backend::direct, Backend::im2col}) {
    const auto good = compare(case3x3(), false, be);
    EXPECT_TRUE(good.passed());
    const auto bad = compare(case3x3(), true, be);
    EXPECT_GT(bad.wrong, bad.checked / 4);
  }
}

#ifdef SP_HAVE_ONEDNN
// oneDNN in its chosen layout (input reordered at bind, output by
// sync_output) and on plain tensors: both within the bound, both catching
// the flipped weights, depthwise included (where the layouts differ most).
TEST(ConvCheck, OnednnInBothLayoutsPassesAndFlippedWeightsFail) {
  if (!onednn_usable(true)) GTEST_SKIP() << "oneDNN reads host memory only";
  Case dw = case3x3();
  dw.s.c_in = dw.s.c_out = dw.s.groups = 16;
  for (const Case& c : {case3x3(), dw})
    for (Backend be : {Backend::onednn, Backend::onednn_plain}) {
      EXPECT_TRUE(compare(c, false, be).passed());
      const auto bad = compare(c, true, be);
      EXPECT_GT(bad.wrong, bad.checked / 4);
    }
}
#endif

TEST(ConvCheck, StridedGroupedAndDepthwiseShapesPass) {
  Case c = case3x3();
  c.s.stride = 2, c.s.c_in = 6, c.s.c_out = 9, c.s.groups = 3;
  EXPECT_TRUE(compare(c, false).passed());
  c.s.c_out = 6, c.s.groups = 6, c.s.stride = 1;
  EXPECT_TRUE(compare(c, false).passed());
}

// The depthwise and pointwise kernels (conv2d_dispatch) against the reference and its
// bound on random shapes: any k (square or not), stride 1-3, padding 0..k, widths from 1
// (below one strip) to beyond several strips, C_in/C_out around the register tiles, H*W
// from 1, every activation, with and without bias. A fixed seed: the same shapes each run.
TEST(ConvCheck, DepthwiseAndPointwiseKernelsPassOnRandomShapes) {
  std::mt19937 g(2026);
  auto pick = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(g); };
  int checked = 0;
  for (int i = 0; i < 80; ++i) {
    Case c;
    c.n = pick(1, 3);
    if (i % 2 == 0) {  // depthwise
      c.s.c_in = c.s.c_out = c.s.groups = pick(1, 6);
      c.s.kh = pick(0, 2) ? 3 : pick(1, 6);
      c.s.kw = pick(0, 3) ? c.s.kh : pick(1, 6);
      c.s.stride = pick(1, 3);
      c.s.pad_h = pick(0, c.s.kh), c.s.pad_w = pick(0, 3) ? c.s.pad_h : pick(0, c.s.kw);
      c.h = pick(1, 30), c.w = pick(1, 70);
      if (c.h + 2 * c.s.pad_h < c.s.kh || c.w + 2 * c.s.pad_w < c.s.kw) continue;
      ASSERT_EQ(direct_path(c.s), DirectPath::depthwise);
    } else {  // pointwise
      c.s.c_in = pick(1, 70), c.s.c_out = pick(1, 20);
      c.h = pick(1, 12), c.w = pick(1, 40);
      ASSERT_EQ(direct_path(c.s), DirectPath::pointwise);
    }
    c.s.bias = pick(0, 1) == 1;
    c.s.act = static_cast<Act>(pick(0, 2));
    const auto r = compare(c, false);
    EXPECT_TRUE(r.passed()) << "shape " << i << ": " << describe(c.s) << " N=" << c.n << " H=" << c.h << " W=" << c.w
                            << ", " << r.wrong << " wrong";
    ++checked;
  }
  EXPECT_GT(checked, 60);
}

// The general kernel (conv2d_direct: its stride-1 host AVX2 or AVX-512 path tiles output positions
// across row ends, see conv_direct_simd.hpp) against the reference and its bound on the shapes of
// cases::general_case.
template <class T>
void general_kernel_random_shapes() {
  std::mt19937 g(2027);
  int checked = 0;
  for (int i = 0; i < 60; ++i) {
    Case c;
    if (!cases::general_case(g, i, c)) continue;
    const auto r = compare<T>(c, false);
    EXPECT_TRUE(r.passed()) << "shape " << i << ": " << describe(c.s) << " N=" << c.n << " H=" << c.h << " W=" << c.w
                            << ", " << r.wrong << " wrong";
    ++checked;
  }
  EXPECT_GT(checked, 40);
}
TEST(ConvCheck, GeneralKernelPassesOnRandomShapesFp32) { general_kernel_random_shapes<float>(); }
TEST(ConvCheck, GeneralKernelPassesOnRandomShapesFp64) { general_kernel_random_shapes<double>(); }

#if defined(SP_HOST_AVX2) || defined(SP_HOST_AVX512)
// The vector path's row blocks: for a 56 x 56 3x3 "same" layer of 64 channels, no row count that fits
// the scratch computes fewer positions than the chosen one, and the chosen one computes at most 5%
// more than the 3136 outputs (the kw - 1 = 2 unstored positions per 58-wide row are 3.4%).
TEST(ConvCheck, DirectRowBlocksComputeTheFewestPositions) {
  ConvSpec s;
  s.c_in = s.c_out = 64, s.kh = s.kw = 3, s.pad_h = s.pad_w = 1;
  const int r = direct_simd_rows_per_item<float>(s, 56, 56);
  const int64_t chosen = direct_simd_positions<float>(s, 56, 56, r);
  const int rmax = DirectSimdTiles<float>::scratch_bytes / (64 * 58 * int(sizeof(float))) - 2;
  for (int q = 1; q <= rmax; ++q) EXPECT_LE(chosen, direct_simd_positions<float>(s, 56, 56, q)) << "rows " << q;
  EXPECT_LE(chosen, 3136 * 105 / 100) << "rows per item " << r;
}
#endif

// The strip GEMM (the pointwise kernel's and im2col's product) against the reference in fp32 and
// fp64 on the shapes of cases::strip_case.
template <class T>
void strip_gemm_random_shapes() {
  std::mt19937 g(2028);
  for (int i = 0; i < 40; ++i) {
    const Case c = cases::strip_case(g, i);
    const bool im2col = i % 2 == 1;
    if (!im2col) ASSERT_EQ(direct_path(c.s), DirectPath::pointwise);
    const auto r = compare<T>(c, false, im2col ? Backend::im2col : Backend::direct);
    EXPECT_TRUE(r.passed()) << (im2col ? "im2col " : "pointwise ") << i << ": " << describe(c.s) << " N=" << c.n
                            << " H=" << c.h << " W=" << c.w << ", " << r.wrong << " wrong";
  }
}
TEST(ConvCheck, StripGemmPassesOnRandomShapesFp32) { strip_gemm_random_shapes<float>(); }
TEST(ConvCheck, StripGemmPassesOnRandomShapesFp64) { strip_gemm_random_shapes<double>(); }

// The depthwise 3x3 padded strips (cases::each_padded_layout) in fp32 (16-wide strips) and fp64
// (8-wide).
template <class T>
void padded_strips_cover_every_width() {
  cases::each_padded_layout([](int i, int w, int h, int pad_h) {
    const Case c = cases::padded_depthwise_case(i, w, h, pad_h);
    ASSERT_EQ(direct_path(c.s), DirectPath::depthwise);
    const auto r = compare<T>(c, false);
    EXPECT_TRUE(r.passed()) << describe(c.s) << " N=" << c.n << " H=" << h << " W=" << w << ", " << r.wrong << " wrong";
  });
}
TEST(ConvCheck, DepthwisePaddedStripsCoverEveryWidthFp32) { padded_strips_cover_every_width<float>(); }
TEST(ConvCheck, DepthwisePaddedStripsCoverEveryWidthFp64) { padded_strips_cover_every_width<double>(); }

// The streamed stores (non-temporal, through a block buffer) write exactly what the cached ones
// do, over the same layouts as above; the reference checks the cached path. Where the build has no
// streamed path both calls take the cached one and the test checks nothing new.
template <class T>
void streamed_stores_equal_cached() {
  cases::each_padded_layout([](int i, int w, int h, int pad_h) {
    ConvSpec s;
    s.c_in = s.c_out = s.groups = 3, s.kh = s.kw = 3, s.pad_h = pad_h, s.pad_w = 1;
    s.bias = i % 3 == 0, s.act = static_cast<Act>(i % 3);
    const int n = 1 + i % 2;
    Tensor<T> x("x", n, 3, h, w), wt("w", 3, 1, 3, 3), a("a", n, 3, s.out_h(h), s.out_w(w)),
        b("b", n, 3, s.out_h(h), s.out_w(w));
    Vec<T> bias("bias", 3);
    const auto fill = [](auto v, uint64_t seed) {
      const auto h = fill_values<T>(static_cast<int64_t>(v.size()), seed, 1.0);
      Kokkos::deep_copy(v, Kokkos::View<const T*, Kokkos::HostSpace>(h.data(), h.size()));
    };
    fill(Kokkos::View<T*>(x.data(), x.size()), 5 + i), fill(Kokkos::View<T*>(wt.data(), wt.size()), 9 + i);
    fill(bias, 13 + i);
    Kokkos::deep_copy(a, T(-7)), Kokkos::deep_copy(b, T(7));  // every element must be overwritten
    conv2d_depthwise<T>(s, x, wt, bias, a, DwStores::cached);
    conv2d_depthwise<T>(s, x, wt, bias, b, DwStores::streamed);
    const auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
    const auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
    int64_t wrong = 0;
    for (size_t k = 0; k < ha.size(); ++k) wrong += ha.data()[k] != hb.data()[k];
    EXPECT_EQ(wrong, 0) << describe(s) << " N=" << n << " H=" << h << " W=" << w;
  });
}
TEST(ConvCheck, DepthwiseStreamedStoresEqualCachedFp32) { streamed_stores_equal_cached<float>(); }
TEST(ConvCheck, DepthwiseStreamedStoresEqualCachedFp64) { streamed_stores_equal_cached<double>(); }

TEST(ConvCheck, BadLayersAreInputErrors) {
  ConvSpec s = case3x3().s;
  EXPECT_NO_THROW(validate(s, 9, 9, "t"));
  ConvSpec a = s;
  a.stride = 0;
  EXPECT_THROW(validate(a, 9, 9, "t"), sp::InputError);
  a = s, a.pad_w = -1;
  EXPECT_THROW(validate(a, 9, 9, "t"), sp::InputError);
  a = s, a.groups = 2;  // 5 input channels
  EXPECT_THROW(validate(a, 9, 9, "t"), sp::InputError);
  a = s, a.pad_h = a.pad_w = 0, a.kh = 10;
  EXPECT_THROW(validate(a, 9, 9, "t"), sp::InputError);
  a.kh = 9;  // exactly the input: one output row
  EXPECT_NO_THROW(validate(a, 9, 9, "t"));
}

TEST(ConvCheck, TechniquesValidateTheirParameters) {
  auto* r = sp::Registry::get().find("conv2d");
  ASSERT_NE(r, nullptr);
  auto t = r->make();
  sp::Params p = r->info.param_sets.front().params;
  EXPECT_NO_THROW(t->validate(p, 1));
  for (auto [k, v] : {std::pair{"stride", "0"}, {"pad", "-2"}, {"groups", "2"}, {"bias", "3"}, {"act", "gelu"}}) {
    sp::Params q = p;
    q.set(k, v);
    EXPECT_THROW(t->validate(q, 1), sp::InputError) << k << "=" << v;
  }
}

}  // namespace
