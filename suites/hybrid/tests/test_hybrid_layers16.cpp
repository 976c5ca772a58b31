// The layer library in 16-bit storage (kernels/nn, the attention core of
// kernels/modelparallel): every layer loads its 16-bit operands into fp32,
// computes as the fp32 instantiation does and rounds each output once. So
// each 16-bit output must be the fp32 layer's output on the widened
// operands, rounded to nearest-even into the 16-bit type, bit for bit. One
// exception: the 16-bit softmax evaluates exp(a x - m) without storing a x
// in between (the fp32 one stores it in place), so the compiler may contract
// a x - m into an FMA in one and not the other: an fp32 ulp apart before the
// rounding, the probability is then the rounded value or its neighbour.
// Statistics kept in fp32 are compared in fp32.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "kernels/modelparallel/attention_core.hpp"
#include "kernels/nn/activations.hpp"
#include "kernels/nn/layernorm.hpp"
#include "kernels/nn/softmax.hpp"
#include "kernels/precision/float16.hpp"
#include "suites/nn/tests/host_device_copy.hpp"

namespace {

using sp::precision::bf16_t;
using sp::precision::fp16_t;

using sp::test::back;
using sp::test::dev;
// 16-bit values (rounded from a deterministic spread) and their fp32 widening.
template <class S>
std::vector<S> values16(size_t n, int salt, double lo = -3, double hi = 3) {
  std::vector<S> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = S::from_float(float(lo + (hi - lo) * double((i * 2654435761u + salt * 97u) % 1009) / 1008.0));
  return v;
}
template <class S>
std::vector<float> widen(const std::vector<S>& v) {
  std::vector<float> o(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = v[i].to_float();
  return o;
}
// Outputs that are neither the rounded fp32 value nor its neighbour; and
// how many are not bitwise the rounded value (reported).
template <class S>
long long off_by_more_than_one(const std::vector<S>& got, const std::vector<float>& f32, long long& not_exact) {
  long long bad = 0;
  not_exact = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const S want = S::from_float(f32[i]);
    const int d = std::abs(int(got[i].bits) - int(want.bits));
    not_exact += d != 0;
    const bool same_sign = (got[i].bits & 0x8000u) == (want.bits & 0x8000u);
    bad += !(d == 0 || (d == 1 && same_sign));
  }
  return bad;
}
long long off_f32(const std::vector<float>& a, const std::vector<float>& b, float rel) {
  long long bad = 0;
  for (size_t i = 0; i < a.size(); ++i) bad += !(std::fabs(a[i] - b[i]) <= rel * std::fabs(b[i]));
  return bad;
}

template <class S>
void check_layers16() {
  const int rows = 7, n = 67;
  const auto x = values16<S>(size_t(rows) * n, 1), g = values16<S>(n, 2, 0.5, 1.5), b = values16<S>(n, 3),
             dy = values16<S>(x.size(), 4);
  long long ne = 0;
  // Layer norm forward and backward.
  Kokkos::View<S*> Y("y", x.size()), dX("dx", x.size());
  Kokkos::View<float*> mu("mu", rows), rs("rs", rows), dg("dg", n), db("db", n);
  auto X = dev(x), G = dev(g), B = dev(b), dY = dev(dy);
  sp::nn::layernorm_forward<S>(rows, n, X.data(), G.data(), B.data(), 1e-5f, Y.data(), mu.data(), rs.data());
  sp::nn::layernorm_backward<S>(rows, n, X.data(), G.data(), mu.data(), rs.data(), dY.data(), dX.data(), dg.data(),
                                db.data());
  Kokkos::View<float*> Y32("y32", x.size()), dX32("dx32", x.size()), mu32("mu32", rows), rs32("rs32", rows),
      dg32("dg32", n), db32("db32", n);
  auto X32 = dev(widen(x)), G32 = dev(widen(g)), B32 = dev(widen(b)), dY32 = dev(widen(dy));
  sp::nn::layernorm_forward<float>(rows, n, X32.data(), G32.data(), B32.data(), 1e-5f, Y32.data(), mu32.data(),
                                   rs32.data());
  sp::nn::layernorm_backward<float>(rows, n, X32.data(), G32.data(), mu32.data(), rs32.data(), dY32.data(), dX32.data(),
                                    dg32.data(), db32.data());
  EXPECT_EQ(off_by_more_than_one(back(Y), back(Y32), ne), 0) << "layer norm";
  EXPECT_EQ(ne, 0) << "not the fp32 value rounded once";
  EXPECT_EQ(off_by_more_than_one(back(dX), back(dX32), ne), 0) << "layer norm backward";
  EXPECT_EQ(ne, 0) << "not the fp32 value rounded once";
  // fp32 statistics and parameter gradients: an FMA changes a sum of n terms
  // by at most gamma_n of its magnitude; 2^-24 n (n = 67) per unit is ample
  // for these well-conditioned sums of magnitude ~ their value.
  EXPECT_EQ(off_f32(back(mu), back(mu32), 0), 0);  // a plain sum: no multiply-add
  EXPECT_EQ(off_f32(back(rs), back(rs32), 0x1p-24f * 2 * n), 0);
  EXPECT_EQ(off_f32(back(db), back(db32), 0), 0);
  // GeLU forward and backward, the residual add.
  Kokkos::View<S*> H("h", x.size()), dZ("dz", x.size()), Sum("sum", x.size());
  Kokkos::View<float*> H32("h32", x.size()), dZ32("dz32", x.size()), Sum32("sum32", x.size());
  sp::nn::gelu_forward(X.data(), H.data(), int64_t(x.size()));
  sp::nn::gelu_forward(X32.data(), H32.data(), int64_t(x.size()));
  sp::nn::gelu_backward(X.data(), dY.data(), dZ.data(), int64_t(x.size()));
  sp::nn::gelu_backward(X32.data(), dY32.data(), dZ32.data(), int64_t(x.size()));
  sp::nn::add(X.data(), dY.data(), Sum.data(), int64_t(x.size()));
  sp::nn::add(X32.data(), dY32.data(), Sum32.data(), int64_t(x.size()));
  EXPECT_EQ(off_by_more_than_one(back(H), back(H32), ne), 0) << "gelu";
  EXPECT_EQ(ne, 0) << "not the fp32 value rounded once";
  EXPECT_EQ(off_by_more_than_one(back(dZ), back(dZ32), ne), 0) << "gelu backward";
  EXPECT_EQ(ne, 0) << "not the fp32 value rounded once";
  EXPECT_EQ(off_by_more_than_one(back(Sum), back(Sum32), ne), 0) << "add";
  EXPECT_EQ(ne, 0) << "not the fp32 value rounded once";
  // The attention core: b = 2 samples, s = 5, 2 heads of d = 3 (softmax inside).
  const sp::mp::AttnShape sh{2, 5, 2, 3};
  const int tok = sh.b * sh.s, hl = sh.hl();
  const auto qkv = values16<S>(size_t(tok) * 3 * hl, 5, -1, 1), dO = values16<S>(size_t(tok) * hl, 6, -1, 1);
  const size_t np = size_t(sh.b) * sh.heads * sh.s * sh.s;
  Kokkos::View<S*> O("o", size_t(tok) * hl), P("p", np), dS("ds", np), dQKV("dqkv", qkv.size());
  Kokkos::View<float*> O32("o32", size_t(tok) * hl), P32("p32", np), dS32("ds32", np), dQKV32("dqkv32", qkv.size());
  auto QKV = dev(qkv), DO = dev(dO), QKV32 = dev(widen(qkv)), DO32 = dev(widen(dO));
  sp::mp::attention_forward<S>(sh, QKV.data(), O.data(), P.data());
  sp::mp::attention_backward<S>(sh, QKV.data(), P.data(), DO.data(), dS.data(), dQKV.data());
  // The fp32 chain fed with the 16-bit P rounded as the 16-bit chain stores
  // it: each stage compared on identical inputs.
  sp::mp::attention_forward<float>(sh, QKV32.data(), O32.data(), P32.data());
  EXPECT_EQ(off_by_more_than_one(back(P), back(P32), ne), 0) << "softmax probabilities";
  auto P16w = dev(widen(back(P)));
  sp::mp::attention_backward<float>(sh, QKV32.data(), P16w.data(), DO32.data(), dS32.data(), dQKV32.data());
  // dV = P^T dO depends on P and dO only: same inputs, one rounding.
  std::vector<S> dv16;
  std::vector<float> dv32;
  const auto d16 = back(dQKV);
  const auto d32 = back(dQKV32);
  for (int t = 0; t < tok; ++t)
    for (int c = 2 * hl; c < 3 * hl; ++c)
      dv16.push_back(d16[size_t(t) * 3 * hl + c]), dv32.push_back(d32[size_t(t) * 3 * hl + c]);
  EXPECT_EQ(off_by_more_than_one(dv16, dv32, ne), 0) << "attention dV";
  EXPECT_EQ(ne, 0) << "not the fp32 value rounded once";
  // The softmax on its own, causal and not.
  for (int causal : {0, 6}) {
    const auto sc = values16<S>(size_t(12) * 6, 7 + causal, -6, 6), gp = values16<S>(sc.size(), 8);
    auto Sc = dev(sc), Gp = dev(gp), Sc32 = dev(widen(sc));
    sp::nn::softmax_forward<S>({12, 6, 6, causal}, Sc.data(), 0.37f);
    sp::nn::softmax_forward<float>({12, 6, 6, causal}, Sc32.data(), 0.37f);
    EXPECT_EQ(off_by_more_than_one(back(Sc), back(Sc32), ne), 0) << "softmax causal " << causal;
    auto Pw = dev(widen(back(Sc))), Gp32 = dev(widen(gp));
    sp::nn::softmax_backward<S>({12, 6, 6, causal}, Sc.data(), Gp.data());
    sp::nn::softmax_backward<float>({12, 6, 6, causal}, Pw.data(), Gp32.data());
    EXPECT_EQ(off_by_more_than_one(back(Gp), back(Gp32), ne), 0) << "softmax backward causal " << causal;
    EXPECT_EQ(ne, 0) << "not the fp32 value rounded once";
  }
}

TEST(HybridLayers16, Fp16LayersAreTheFp32LayersRoundedOnce) { check_layers16<fp16_t>(); }
TEST(HybridLayers16, Bf16LayersAreTheFp32LayersRoundedOnce) { check_layers16<bf16_t>(); }

// A 16-bit layer that rounded an intermediate (here: GeLU's input rounded
// before the multiply by dy) is caught by the same comparison.
TEST(HybridLayers16, AnExtraRoundingIsCaught) {
  const auto z = values16<bf16_t>(4099, 9, -4, 4), dy = values16<bf16_t>(4099, 10);
  std::vector<bf16_t> twice(z.size());
  std::vector<float> once(z.size());
  for (size_t i = 0; i < z.size(); ++i) {
    const float gz = sp::nn::gelu_grad(z[i].to_float());
    twice[i] = bf16_t::from_float(dy[i].to_float() * bf16_t::from_float(gz).to_float());
    once[i] = dy[i].to_float() * gz;
  }
  long long ne = 0;
  off_by_more_than_one(twice, once, ne);
  EXPECT_GT(ne, 0);
}

}  // namespace
