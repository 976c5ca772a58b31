// Int8 quantization edge cases: NaN/Inf inputs are refused, an all-zero
// group gets scale 0 and quantizes to exact zeros, given scales must be
// finite and >= 0, rounding is to nearest with clamping at +-127, and the
// int8 GEMM accumulates exactly in int32.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>

#include "kernels/precision/gemm_lowp.hpp"
#include "kernels/precision/quantize.hpp"
#include "reference/precision/quant_ref.hpp"

namespace {

namespace pr = sp::precision;
using pr::QuantAxis;

pr::Mat<float> make(int r, int c, std::vector<float> v) {
  pr::Mat<float> m("m", r, c);
  auto h = Kokkos::create_mirror_view(m);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) h(i, j) = v[size_t(i) * c + j];
  Kokkos::deep_copy(m, h);
  return m;
}

TEST(Quantize, RefusesNonFiniteInput) {
  EXPECT_THROW(pr::quantize(make(1, 3, {1, NAN, 2}), QuantAxis::tensor), sp::InputError);
  EXPECT_THROW(pr::quantize(make(1, 3, {1, INFINITY, 2}), QuantAxis::row), sp::InputError);
  EXPECT_THROW(pr::quantize(make(2, 2, {1, 2, -INFINITY, 2}), QuantAxis::column), sp::InputError);
}

TEST(Quantize, ZeroGroupHasScaleZeroAndExactZeros) {
  auto q = pr::quantize(make(2, 3, {0, 0, 0, 1, -2, 0.5f}), QuantAxis::row);
  auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), q.scale);
  auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), q.q);
  EXPECT_EQ(hs(0), 0.0f);
  for (int j = 0; j < 3; ++j) EXPECT_EQ(hq(0, j), 0);
  EXPECT_EQ(hs(1), 2.0f / 127.0f);
  EXPECT_EQ(hq(1, 1), -127);  // the absmax element maps to the end of the range
  EXPECT_EQ(hq(1, 0), 64);    // 1 / (2/127) = 63.5: half away from zero
}

TEST(Quantize, RejectsBadScales) {
  auto x = make(1, 2, {1, 2});
  Kokkos::View<float*> s("s", 1);
  Kokkos::deep_copy(s, -1.0f);
  EXPECT_THROW(pr::quantize_with_scales(x, QuantAxis::tensor, s), sp::InputError);
  Kokkos::deep_copy(s, NAN);
  EXPECT_THROW(pr::quantize_with_scales(x, QuantAxis::tensor, s), sp::InputError);
  Kokkos::deep_copy(s, 0.001f);  // too small a scale saturates at +-127 instead of wrapping
  auto q = pr::quantize_with_scales(x, QuantAxis::tensor, s);
  auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), q.q);
  EXPECT_EQ(hq(0, 0), 127);
  EXPECT_EQ(hq(0, 1), 127);
}

TEST(Quantize, Int8GemmAccumulatesExactlyInInt32) {
  // Extreme values: K * 127 * 127 stays far from int32 overflow but far beyond int16.
  const int M = 5, N = 7, K = 300;
  std::vector<int8_t> a(M * K), b(K * N);
  for (int x = 0; x < M * K; ++x) a[x] = int8_t(x % 3 == 0 ? 127 : (x % 3 == 1 ? -127 : x % 50));
  for (int x = 0; x < K * N; ++x) b[x] = int8_t(x % 2 ? 127 : -(x % 120));
  pr::Mat<int8_t> A("A", M, K), B("B", K, N);
  pr::Mat<int32_t> C("C", M, N);
  auto ha = Kokkos::create_mirror_view(A);
  auto hb = Kokkos::create_mirror_view(B);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) ha(i, k) = a[i * K + k];
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) hb(k, j) = b[k * N + j];
  Kokkos::deep_copy(A, ha);
  Kokkos::deep_copy(B, hb);
  sp::kernels::gemm_lowp<int8_t, int32_t>(A, B, C);
  auto want = sp::reference::int_gemm_ref(M, N, K, a, b);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) EXPECT_EQ(int64_t(hc(i, j)), want[i * N + j]);
}

}  // namespace
