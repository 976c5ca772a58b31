// Tensor-parallel layers on one rank (t = 1, SelfTransport): the claims that
// need no second rank. Multi-rank conformance runs in the *_mr suites.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/comm/transport.hpp"
#include "kernels/modelparallel/tp_layers.hpp"
#include "reference/modelparallel/transformer_ref.hpp"
#include "suites/modelparallel/mp_data.hpp"
#include "suites/modelparallel/tp_model.hpp"

using sp::mp::Mat;
using sp::reference::EbMat;

namespace {

std::vector<double> host(const Mat& m) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m);
  return std::vector<double>(h.data(), h.data() + h.size());
}

}  // namespace

// Why Megatron splits the first MLP GEMM by columns: GeLU is not additive, so
// with A split by rows (X = [X1 X2]) the ranks could not apply GeLU to their
// partial products and sum afterwards.
TEST(TensorParallel, GeluIsNotAdditiveSoFirstGemmCannotBeRowSplit) {
  const int n = 4, h = 8, f = 6, half = h / 2;
  const auto X = sp::mp::fill(n * h, 11, 1.0), A = sp::mp::fill(h * f, 12, 0.5), B = sp::mp::fill(f * h, 13, 0.5);
  // Concrete scalar: GeLU(1 + 1) vs GeLU(1) + GeLU(1).
  EXPECT_GT(std::fabs(sp::mp::gelu(2.0) - 2 * sp::mp::gelu(1.0)), 0.1);
  // Row split of the first GEMM: H_wrong = GeLU(X1 A1) + GeLU(X2 A2).
  std::vector<double> Hwrong(n * f, 0.0);
  for (int part = 0; part < 2; ++part)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < f; ++j) {
        double z = 0;
        for (int k = part * half; k < (part + 1) * half; ++k) z += X[i * h + k] * A[k * f + j];
        Hwrong[i * f + j] += sp::mp::gelu(z);
      }
  const EbMat eX = sp::reference::exact(X, n, h), eA = sp::reference::exact(A, h, f),
              eB = sp::reference::exact(B, f, h);
  const auto ref = sp::reference::mlp_forward(eX, eA, eB);
  Mat Ywrong("yw", n, h);
  sp::mp::matmul(sp::mp::to_view(Hwrong, n, f), false, sp::mp::to_view(B, f, h), false, Ywrong);
  sp::Comparator wrong("row-split first GEMM");
  sp::mp::compare(wrong, Ywrong, ref.Y);
  EXPECT_GT(wrong.result().wrong, n * h / 2) << "a row-split first GEMM should give a wrong MLP output";
  // The column split (what TpMlp does) is right: GeLU acts on whole columns.
  sp::comm::SelfTransport self;
  sp::mp::TpGroup g{&self};
  sp::mp::TpMlp mlp;
  mlp.init(g, sp::mp::to_view(A, h, f), sp::mp::to_view(B, f, h));
  Mat Y("y", n, h);
  mlp.forward(g, sp::mp::to_view(X, n, h), Y);
  sp::Comparator right("column split");
  sp::mp::compare(right, Y, ref.Y);
  EXPECT_EQ(right.result().wrong, 0);
  EXPECT_GT(right.result().checked, 0);
}

TEST(TensorParallel, GeluLipschitzConstantsHold) {
  // bounded.hpp relies on max|GeLU'| < 1.13 and max|GeLU''| < 0.8 (tanh form).
  const long double hstep = 1e-6L;
  for (long double x = -12; x <= 12; x += 1e-3L) {
    const long double g1 = sp::reference::gelu_grad({x, 0}).v;
    const long double g2 =
        (sp::reference::gelu_grad({x + hstep, 0}).v - sp::reference::gelu_grad({x - hstep, 0}).v) / (2 * hstep);
    ASSERT_LT(std::fabs(g1), sp::reference::kGeluLip) << x;
    ASSERT_LT(std::fabs(g2), sp::reference::kGeluGradLip) << x;
  }
}

TEST(TensorParallel, CheckCatchesASmallError) {
  // The bounds are tight enough to see an error of 1e-10 in one element.
  const sp::mp::TpShape sh{2, 8, 24, 12, 96};
  const auto d = sp::mp::TpData::make(sp::mp::TpKind::layer, sh);
  sp::comm::SelfTransport self;
  sp::mp::TpGroup g{&self};
  sp::mp::TpTransformerLayer layer;
  layer.attn.init(g, sh.b, sh.s, sh.heads, d.view("Wq"), d.view("Wk"), d.view("Wv"), d.view("Wo"));
  layer.mlp.init(g, d.view("A"), d.view("B"));
  Mat Y("y", sh.n(), sh.h), dX("dx", sh.n(), sh.h);
  layer.forward(g, d.view("X"), Y);
  layer.backward(g, d.view("dY"), dX);
  // Exactly the communication of a transformer layer: two all-reduces each way.
  EXPECT_EQ(g.allreduce_fwd, 2);
  EXPECT_EQ(g.allreduce_bwd, 2);
  sp::mp::TpOutputs out{Y, dX, {layer.attn.qkv.dW, layer.attn.proj.dW, layer.mlp.fc1.dW, layer.mlp.fc2.dW}};
  EXPECT_TRUE(sp::mp::tp_check(sp::mp::TpKind::layer, sh, d, 0, 1, out).passed());
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), layer.mlp.fc1.dW);
  h(3, 5) += 1e-10;
  Kokkos::deep_copy(layer.mlp.fc1.dW, h);
  const auto r = sp::mp::tp_check(sp::mp::TpKind::layer, sh, d, 0, 1, out);
  EXPECT_EQ(r.wrong, 1);
}

TEST(TensorParallel, ShapeRulesNameTheProblem) {
  const sp::mp::TpShape sh{2, 8, 24, 12, 96};
  EXPECT_NO_THROW(sp::mp::tp_check_shape(sp::mp::TpKind::layer, sh, 4));
  EXPECT_THROW(sp::mp::tp_check_shape(sp::mp::TpKind::attention, sh, 5), sp::InputError);                  // heads % t
  EXPECT_THROW(sp::mp::tp_check_shape(sp::mp::TpKind::mlp, {2, 8, 24, 12, 90}, 4), sp::InputError);        // ffn % t
  EXPECT_THROW(sp::mp::tp_check_shape(sp::mp::TpKind::attention, {2, 8, 25, 12, 96}, 1), sp::InputError);  // h % heads
}
