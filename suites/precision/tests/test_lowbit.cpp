// Low-bit weight edge cases: NaN weights are refused, an all-zero group gets
// scale 0 and codes 0, the extreme codes of every width pack and unpack to
// themselves, log2 rounds at the geometric midpoints, and the XNOR dot with
// a partial sign word equals the sign dot product.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <vector>

#include "kernels/precision/lowbit.hpp"
#include "reference/precision/lowbit_ref.hpp"

namespace {

namespace pr = sp::precision;
namespace ref = sp::reference;

pr::Mat<float> make(int r, int c, const std::vector<float>& v) {
  pr::Mat<float> m("m", r, c);
  auto h = Kokkos::create_mirror_view(m);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) h(i, j) = v[size_t(i) * c + j];
  Kokkos::deep_copy(m, h);
  return m;
}

std::vector<int> codes_of(const pr::LowbitWeights& w, int row, ref::LowbitRef scheme) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w.packed);
  return ref::unpack_row_ref(&h(row, 0), w.K, scheme, w.bits);
}

TEST(Lowbit, RefusesNonFiniteWeights) {
  EXPECT_THROW(pr::quantize_lowbit(make(1, 8, {1, 2, NAN, 0, 0, 0, 0, 0}), pr::LowbitScheme::uniform, 4, 8),
               sp::InputError);
  EXPECT_THROW(pr::binarize_weights(make(1, 2, {INFINITY, 1})), sp::InputError);
}

TEST(Lowbit, ZeroGroupHasScaleZeroAndZeroCodes) {
  for (auto [scheme, rs] : {std::pair{pr::LowbitScheme::uniform, ref::LowbitRef::uniform},
                            {pr::LowbitScheme::log2, ref::LowbitRef::log2}}) {
    auto w = pr::quantize_lowbit(make(1, 8, {0, 0, 0, 0, 1, -2, 0.5f, 0}), scheme, 4, 4);
    auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w.scale);
    EXPECT_EQ(hs(0, 0), 0.0f);
    const auto c = codes_of(w, 0, rs);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(c[k], 0);
    EXPECT_GT(hs(0, 1), 0.0f);
  }
}

TEST(Lowbit, ExtremeUniformCodesRoundTripAtEveryWidth) {
  for (int bits : {2, 4, 8}) {
    const int Q = (1 << (bits - 1)) - 1, per = 8 / bits;
    std::vector<float> v(8 * per);
    for (size_t k = 0; k < v.size(); ++k) v[k] = float(k % 3 == 0 ? Q : k % 3 == 1 ? -Q : 0);
    auto w = pr::quantize_lowbit(make(1, int(v.size()), v), pr::LowbitScheme::uniform, bits, int(v.size()));
    const auto c = codes_of(w, 0, ref::LowbitRef::uniform);
    for (size_t k = 0; k < v.size(); ++k) EXPECT_EQ(c[k], int(v[k])) << bits << "-bit code " << k;
  }
}

TEST(Lowbit, Log2RoundsAtTheGeometricMidpoints) {
  // max 1: just above 2^-1.5 rounds up to 2^-1 (index 2), just below to 2^-2 (index 3).
  const float mid = std::ldexp(std::sqrt(0.5f), -1);
  auto w = pr::quantize_lowbit(make(1, 4, {1, std::nextafter(mid, 1.0f), std::nextafter(mid, 0.0f), -1}),
                               pr::LowbitScheme::log2, 4, 4);
  const auto c = codes_of(w, 0, ref::LowbitRef::log2);
  EXPECT_EQ(c[0], 64);  // 2^(L-1): the group max
  EXPECT_EQ(c[1], 32);  // 2^-1 of the max
  EXPECT_EQ(c[2], 16);  // 2^-2 of the max
  EXPECT_EQ(c[3], -64);
}

TEST(Lowbit, XnorDotWithAPartialWordIsTheSignDot) {
  const int K = 70;  // one full word and 6 bits of a second
  std::vector<float> a(K), b(K);
  int dot = 0;
  for (int k = 0; k < K; ++k) {
    a[k] = (k * 7 % 5) - 2.0f, b[k] = (k * 3 % 4) - 1.5f;
    dot += (a[k] >= 0) == (b[k] >= 0) ? 1 : -1;
  }
  auto ba = pr::binarize_rows(make(1, K, a));
  auto w = pr::binarize_weights(make(1, K, b));
  pr::Mat<float> c("c", 1, 1);
  pr::gemm_xnor(ba, w, c);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ba.mean_abs);
  auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w.scale);
  EXPECT_EQ(hc(0, 0), (hb(0) * hw(0, 0)) * float(dot));
}

}  // namespace
