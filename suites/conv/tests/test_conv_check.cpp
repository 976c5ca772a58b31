// The conformance bound must separate a right kernel from a wrong one, and
// bad layer descriptions must be rejected with InputError.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "reference/conv/conv_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"
#include "suites/conv/net_exec.hpp"

namespace {

using namespace sp::conv;

struct Case {
  ConvSpec s;
  int n = 2, h = 9, w = 19;
};

// Kernel output of the direct back end vs the reference built with weights w_ref.
sp::CheckResult compare(const Case& c, bool flip_weights, Backend be = Backend::direct) {
  Net net(c.n, c.s.c_in, c.h, c.w);
  net.conv(0, c.s);
  NetExec<float> ex(net, be, 7);
  Tensor<float> x("x", c.n, c.s.c_in, c.h, c.w);
  const auto hx = fill_values<float>(static_cast<int64_t>(x.size()), 3, 1.0);
  Kokkos::deep_copy(x, Kokkos::View<const float****, Kokkos::LayoutRight, Kokkos::HostSpace>(hx.data(), c.n, c.s.c_in,
                                                                                            c.h, c.w));
  ex.bind(x);
  ex.run();
  auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ex.output());
  sp::reference::RefTensor in;
  in.resize(c.n, c.s.c_in, c.h, c.w);
  std::copy(hx.begin(), hx.end(), in.v.begin());
  auto w = ex.host_weights(1);
  if (flip_weights)  // convolution instead of correlation: a classic kernel bug
    for (size_t k = 0; k + c.s.kw <= w.size(); k += c.s.kw) std::reverse(w.begin() + k, w.begin() + k + c.s.kw);
  const auto ref = sp::reference::conv_ref<float>(c.s, in, w, ex.host_bias(1), sp::unit_roundoff<float>());
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
    EXPECT_TRUE(r.passed()) << "shape " << i << ": " << describe(c.s) << " N=" << c.n << " H=" << c.h
                            << " W=" << c.w << ", " << r.wrong << " wrong";
    ++checked;
  }
  EXPECT_GT(checked, 60);
}

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
