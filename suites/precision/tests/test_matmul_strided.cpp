// The training loops' strided GEMM against plain loops: every transposition
// of A and B, the ReLU and mask epilogues, fp32 and 16-bit storage. Bound:
// gamma_K(fp32) sum|a||b| on the stored (decoded) inputs, plus half an ulp of
// the output type for the final rounding into C.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>

#include "kernels/precision/matmul_strided.hpp"
#include "reference/precision/float16_ref.hpp"
#include "scaleproof/compare.hpp"

namespace {

using sp::kernels::Epilogue;
using sp::kernels::matmul_strided;
using sp::kernels::Strided;
using sp::precision::fp16_t;

double ref_value(float x) { return x; }
double ref_value(fp16_t x) { return sp::reference::decode16(x.bits, sp::reference::kBinary16); }

template <class S>
void check(bool ta, bool tb, Epilogue ep) {
  const int M = 7, N = 5, K = 33;
  Kokkos::View<S*> A("A", M * K), B("B", K * N), C("C", M * N), mask("mask", M * N);
  auto ha = Kokkos::create_mirror_view(A);
  auto hb = Kokkos::create_mirror_view(B);
  auto hm = Kokkos::create_mirror_view(mask);
  for (int x = 0; x < M * K; ++x) ha(x) = sp::precision::from_f32<S>(float((x * 37) % 23 - 11) / 8.0f);
  for (int x = 0; x < K * N; ++x) hb(x) = sp::precision::from_f32<S>(float((x * 17) % 19 - 9) / 4.0f);
  for (int x = 0; x < M * N; ++x) hm(x) = sp::precision::from_f32<S>(x % 3 == 0 ? -1.0f : 1.0f);
  Kokkos::deep_copy(A, ha);
  Kokkos::deep_copy(B, hb);
  Kokkos::deep_copy(mask, hm);
  // A is stored M x K (or K x M when used transposed), B K x N (or N x K).
  const Strided sa = ta ? Strided::transposed(M) : Strided::rows(K);
  const Strided sb = tb ? Strided::transposed(K) : Strided::rows(N);
  matmul_strided<S, S, S>(M, N, K, A.data(), sa, B.data(), sb, C.data(), ep, mask.data());
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
  const double u_out = std::is_same<S, float>::value ? 0x1p-24 : 0x1p-11;
  sp::Comparator cmp("gamma_K sum|a||b| + u_out |c|");
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0, sa_abs = 0;
      for (int k = 0; k < K; ++k) {
        const double a = ref_value(ha(ta ? k * M + i : i * K + k)), b = ref_value(hb(tb ? j * K + k : k * N + j));
        s += a * b, sa_abs += std::fabs(a * b);
      }
      if (ep == Epilogue::relu && s < 0) s = 0;
      if (ep == Epilogue::mask && !(ref_value(hm(i * N + j)) > 0)) s = 0;
      const double bound = sp::gamma_n(K, 0x1p-24) * sa_abs * (1 + u_out) + u_out * std::fabs(s);
      cmp.add(ref_value(hc(i * N + j)), s, bound);
    }
  EXPECT_TRUE(cmp.result().passed()) << cmp.result().wrong << " wrong, max err " << cmp.result().max_abs_err
                                     << " (ta=" << ta << ", tb=" << tb << ", ep=" << int(ep) << ")";
}

TEST(MatmulStrided, AllTranspositionsAndEpiloguesFp32) {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (Epilogue ep : {Epilogue::none, Epilogue::relu, Epilogue::mask}) check<float>(ta, tb, ep);
}

TEST(MatmulStrided, AllTranspositionsAndEpiloguesFp16) {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (Epilogue ep : {Epilogue::none, Epilogue::relu, Epilogue::mask}) check<fp16_t>(ta, tb, ep);
}

}  // namespace
