// The layer library's row-wise and element-wise layers (kernels/nn) against
// the plain loops of reference/nn, which evaluate the same expressions in
// the same order in the same type: the results must be bitwise equal (where
// the compiler may contract a multiply-add differently, the test says so and
// bounds the difference instead).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <vector>

#include "kernels/nn/activations.hpp"
#include "kernels/nn/layernorm.hpp"
#include "kernels/nn/loss.hpp"
#include "kernels/nn/optim.hpp"
#include "kernels/nn/softmax.hpp"
#include "reference/nn/nn_ref.hpp"
#include "scaleproof/compare.hpp"
#include "suites/nn/tests/host_device_copy.hpp"

namespace {

namespace ref = sp::reference::nn;

template <class T>
std::vector<T> values(size_t n, int salt, double lo = -3, double hi = 3) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = T(lo + (hi - lo) * double((i * 2654435761u + salt * 97u) % 1009) / 1008.0);
  return v;
}
using sp::test::back;
using sp::test::dev;
// Number of elements that differ in value (NaN never equals).
template <class T>
long long differing(const std::vector<T>& a, const std::vector<T>& b) {
  long long n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += !(a[i] == b[i]);
  return n;
}

template <class T>
void check_gelu() {
  const auto z = values<T>(4099, 1, -8, 8), dy = values<T>(4099, 2);
  auto Z = dev(z), Y = dev(z), dZ = dev(dy);
  sp::nn::gelu_forward(Z.data(), Y.data(), int64_t(z.size()));
  sp::nn::gelu_backward(Z.data(), dZ.data(), dZ.data(), int64_t(z.size()));
  std::vector<T> y(z.size()), dz(z.size());
  for (size_t i = 0; i < z.size(); ++i) y[i] = ref::gelu(z[i]), dz[i] = dy[i] * ref::gelu_grad(z[i]);
  EXPECT_EQ(differing(back(Y), y), 0);
  EXPECT_EQ(differing(back(dZ), dz), 0);
  y[7] = std::nextafter(y[7], T(100));
  EXPECT_EQ(differing(back(Y), y), 1);
}
TEST(NnLayers, GeluBitwise) {
  check_gelu<double>();
  check_gelu<float>();
}

TEST(NnLayers, ReluAndMask) {
  std::vector<float> x = {-2, -0.0f, 0, 1.5f, NAN, 3}, g = {1, 2, 3, 4, 5, 6};
  auto X = dev(x), G = dev(g);
  sp::nn::relu_forward(X.data(), 6);
  sp::nn::relu_backward(X.data(), G.data(), G.data(), 6);
  const auto hx = back(X), hg = back(G);
  EXPECT_EQ(hx[0], 0.0f);
  EXPECT_EQ(hx[3], 1.5f);
  EXPECT_TRUE(std::isnan(hx[4]));  // NaN passes through the forward
  EXPECT_EQ(hg, (std::vector<float>{0, 0, 0, 4, 0, 6}));
}

template <class T>
void check_softmax(int causal) {
  const int rows = 3 * 17, cols = 17;
  auto x = values<T>(size_t(rows) * cols, 3, -20, 20);
  const auto g = values<T>(x.size(), 4);
  auto X = dev(x), G = dev(g);
  const T a = T(0.37);
  sp::nn::softmax_forward<T>({rows, cols, cols, causal}, X.data(), a);
  sp::nn::softmax_backward<T>({rows, cols, cols, causal}, X.data(), G.data());
  ref::softmax(x, rows, cols, causal, a);
  auto gr = g;
  ref::softmax_grad(x, gr, rows, cols, causal);
  EXPECT_EQ(differing(back(X), x), 0);
  EXPECT_EQ(differing(back(G), gr), 0);
  for (int r = 0; r < rows; ++r) {  // rows are distributions over their unmasked columns
    double s = 0;
    for (int k = 0; k < cols; ++k) s += x[size_t(r) * cols + k];
    EXPECT_NEAR(s, 1.0, cols * 4 * sp::unit_roundoff<T>());
    if (causal) EXPECT_EQ(x[size_t(r) * cols + cols - 1] != 0, r % cols == cols - 1);
  }
}
TEST(NnLayers, SoftmaxBitwise) {
  for (int causal : {0, 17}) {
    check_softmax<double>(causal);
    check_softmax<float>(causal);
  }
}

template <class T>
void check_layernorm() {
  const int rows = 9, n = 131;
  const auto x = values<T>(size_t(rows) * n, 5), g = values<T>(n, 6), b = values<T>(n, 7), dy = values<T>(x.size(), 8);
  const T eps = T(1e-5);
  auto X = dev(x), Gm = dev(g), Bt = dev(b), dY = dev(dy);
  Kokkos::View<T*> Y("y", x.size()), mean("mean", rows), rstd("rstd", rows), dX("dx", x.size()), dG("dg", n),
      dB("db", n);
  sp::nn::layernorm_forward(rows, n, X.data(), Gm.data(), Bt.data(), eps, Y.data(), mean.data(), rstd.data());
  sp::nn::layernorm_backward(rows, n, X.data(), Gm.data(), mean.data(), rstd.data(), dY.data(), dX.data(), dG.data(),
                             dB.data());
  std::vector<T> m, rs, dx, dg, db;
  const auto y = ref::layernorm(x, rows, n, g, b, eps, m, rs);
  ref::layernorm_grad(x, rows, n, g, m, rs, dy, dx, dg, db);
  EXPECT_EQ(differing(back(Y), y), 0);
  EXPECT_EQ(differing(back(mean), m), 0);
  EXPECT_EQ(differing(back(rstd), rs), 0);
  EXPECT_EQ(differing(back(dX), dx), 0);
  // dgamma_j = sum_r dy xhat: the compiler may fuse each multiply-add (FMA) in
  // one evaluation and not the other; both are within gamma_{rows+1} sum |dy xhat|
  // of the exact sum of the same products, so of each other within twice that.
  const auto got_dg = back(dG);
  sp::Comparator cmp("2 gamma_{rows+1} sum |dy xhat|");
  for (int j = 0; j < n; ++j) {
    double a = 0;
    for (int r = 0; r < rows; ++r)
      a += std::fabs(double(dy[size_t(r) * n + j]) * double((x[size_t(r) * n + j] - m[r]) * rs[r]));
    cmp.add(double(got_dg[j]), double(dg[j]), 2 * sp::gamma_n(rows + 1, sp::unit_roundoff<T>()) * a);
  }
  EXPECT_TRUE(cmp.result().passed());
  EXPECT_EQ(differing(back(dB), db), 0);
}
TEST(NnLayers, LayerNormBitwise) {
  check_layernorm<double>();
  check_layernorm<float>();
}

TEST(NnLayers, MseGradientBitwiseAndLossBound) {
  const auto y = values<double>(777, 9), t = values<double>(777, 10);
  auto Y = dev(y), Tt = dev(t);
  Kokkos::View<double*> D("d", y.size());
  const double c = 1.0 / 48;
  sp::nn::mse_grad(Y.data(), Tt.data(), D.data(), int64_t(y.size()), c);
  std::vector<double> d(y.size());
  long double exact = 0, abs = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    d[i] = c * (y[i] - t[i]);
    const long double r = (long double)y[i] - t[i];
    exact += r * r, abs += r * r;
  }
  EXPECT_EQ(differing(back(D), d), 0);
  // Each residual: one rounding (u |r|), its square 2u + u^2 more; the sum gamma_n; the mean one more.
  const double n = double(y.size()), u = 0x1p-53;
  const double bound = (sp::gamma_n(n + 4, u) * double(abs)) / n;
  EXPECT_LE(std::fabs(sp::nn::mse_loss(Y.data(), Tt.data(), int64_t(y.size())) - double(exact / n)), bound);
}

template <class T>
void check_adam() {
  const size_t n = 1031;
  auto th = values<T>(n, 11), m = values<T>(n, 12, 0, 0), v = values<T>(n, 13, 0, 0);
  auto Th = dev(th), M = dev(m), V = dev(v);
  const sp::nn::AdamConfig c;
  for (int t = 1; t <= 3; ++t) {
    const auto g = values<T>(n, 14 + t);
    auto G = dev(g);
    sp::nn::adam_update<T>(Th.data(), G.data(), M.data(), V.data(), n, c, t);
    ref::adam(th, g, m, v, c.lr, c.beta1, c.beta2, c.eps, t);
  }
  EXPECT_EQ(differing(back(Th), th), 0);
  EXPECT_EQ(differing(back(M), m), 0);
  EXPECT_EQ(differing(back(V), v), 0);
}
TEST(NnOptim, AdamBitwise) {
  check_adam<double>();
  check_adam<float>();
}

TEST(NnOptim, SgdOnMasterWithFp16GradientsBitwise) {
  using sp::precision::fp16_t;
  const size_t n = 513;
  auto master = values<float>(n, 20);
  const auto gf = values<float>(n, 21);
  std::vector<fp16_t> g16(n);
  for (size_t i = 0; i < n; ++i) g16[i] = fp16_t::from_float(gf[i]);
  auto M = dev(master);
  auto G = dev(g16);
  Kokkos::View<fp16_t*> W("w", n);
  const float f = 0.01f / 1024.0f;
  sp::nn::sgd_update(M.data(), G.data(), f, n);
  sp::nn::cast_to(M.data(), W.data(), n);
  for (size_t i = 0; i < n; ++i) master[i] -= f * g16[i].to_float();
  EXPECT_EQ(differing(back(M), master), 0);
  const auto w = back(W);
  long long bad = 0;
  for (size_t i = 0; i < n; ++i) bad += w[i].bits != fp16_t::from_float(master[i]).bits;
  EXPECT_EQ(bad, 0);
}

}  // namespace
