// The layer library's products (kernels/nn/gemm.hpp, linear.hpp) against
// plain loops in long double (reference/nn): every transposition, leading
// dimensions, batches, accumulation, fp32 / fp64 / fp16 / bf16 storage.
// Bound per element (Higham, eq. 3.5): gamma_K(u_acc) sum |a||b| on the
// stored inputs (K + 1 terms when accumulating into C), plus u_C |c| for
// the one rounding of a 16-bit C. K = 300 exceeds one K slice of the tiled
// kernel, so the slice-to-slice accumulation is covered.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <vector>

#include "kernels/nn/gemm.hpp"
#include "kernels/nn/linear.hpp"
#include "reference/nn/nn_ref.hpp"
#include "scaleproof/compare.hpp"

namespace {

using sp::nn::Op;
using sp::precision::bf16_t;
using sp::precision::fp16_t;
namespace ref = sp::reference::nn;

template <class S>
constexpr double u_store() {
  return std::is_same<S, double>::value   ? 0x1p-53
         : std::is_same<S, float>::value  ? 0x1p-24
         : std::is_same<S, fp16_t>::value ? 0x1p-11
                                          : 0x1p-8;
}

// n deterministic values in [-2, 2], stored in S on the device; host copy of the stored values.
template <class S>
Kokkos::View<S*> fill(size_t n, int salt, std::vector<double>& stored) {
  Kokkos::View<S*> d("nn_test", n);
  auto h = Kokkos::create_mirror_view(d);
  stored.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const float x = float(int((i * 2654435761u + salt * 40503u) % 257) - 128) / 64.0f;
    h(i) = sp::nn::store_as<S>(x, 0);
    stored[i] = double(sp::nn::load(h(i)));
  }
  Kokkos::deep_copy(d, h);
  return d;
}

template <class S>
std::vector<double> host(const Kokkos::View<S*>& d) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  std::vector<double> out(h.extent(0));
  for (size_t i = 0; i < out.size(); ++i) out[i] = double(sp::nn::load(h(i)));
  return out;
}

template <class S>
sp::CheckResult compare(const std::vector<double>& got, const ref::ProductRef& want, int terms) {
  using Acc = typename sp::nn::AccOf<S>::type;
  const double g = sp::gamma_n(terms, u_store<Acc>()), uc = std::is_same<S, Acc>::value ? 0 : u_store<S>();
  sp::Comparator cmp("gamma_K |A||B| + u_C |C|");
  for (size_t i = 0; i < got.size(); ++i) {
    const double w = double(want.value[i]);
    // The reference's own rounding (long double to double) is within 2^-64 |c|.
    cmp.add(got[i], w, g * double(want.abs[i]) * (1 + uc) + uc * std::fabs(w) + 0x1p-63 * std::fabs(w));
  }
  return cmp.result();
}

template <class S>
void check_gemm(Op ta, Op tb, bool accumulate) {
  const int M = 37, N = 29, K = 300;
  std::vector<double> a, b, c0;
  auto A = fill<S>(size_t(M) * K, 1, a);
  auto B = fill<S>(size_t(K) * N, 2, b);
  auto C = fill<S>(size_t(M) * N, 3, c0);
  const int64_t lda = ta == Op::N ? K : M, ldb = tb == Op::N ? N : K;
  sp::nn::gemm(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, C.data(), N, accumulate);
  const auto want = ref::gemm(M, N, K, a, ta == Op::T, b, tb == Op::T, accumulate ? &c0 : nullptr);
  const auto r = compare<S>(host(C), want, K + (accumulate ? 1 : 0));
  EXPECT_TRUE(r.passed()) << r.wrong << " of " << r.checked << " wrong, max err " << r.max_abs_err;
}

template <class S>
void check_all_ops() {
  for (Op ta : {Op::N, Op::T})
    for (Op tb : {Op::N, Op::T})
      for (bool acc : {false, true}) check_gemm<S>(ta, tb, acc);
}

TEST(NnGemm, Fp64AllTranspositions) { check_all_ops<double>(); }
TEST(NnGemm, Fp32AllTranspositions) { check_all_ops<float>(); }
TEST(NnGemm, Fp16StorageFp32Accumulation) { check_all_ops<fp16_t>(); }
TEST(NnGemm, Bf16StorageFp32Accumulation) { check_all_ops<bf16_t>(); }

// The bound can fail: one element moved by a few bounds is caught.
TEST(NnGemm, PerturbedResultIsCaught) {
  const int M = 9, N = 7, K = 40;
  std::vector<double> a, b, c0;
  auto A = fill<float>(size_t(M) * K, 1, a);
  auto B = fill<float>(size_t(K) * N, 2, b);
  Kokkos::View<float*> C("C", M * N);
  sp::nn::gemm(Op::N, Op::N, M, N, K, A.data(), K, B.data(), N, C.data(), N);
  auto got = host(C);
  const auto want = ref::gemm(M, N, K, a, false, b, false);
  got[5] += 4 * sp::gamma_n(K, 0x1p-24) * double(want.abs[5]) + 1e-6;
  EXPECT_EQ(compare<float>(got, want, K).wrong, 1);
}

// Batches over (sample, head) pairs of column blocks, as attention uses them:
// matrix b of A is rows [smp s, smp s + s) x columns [h d, h d + d) of a
// [n x ld] activation; C_b = A_b A'_b^T into contiguous [s x s] blocks.
TEST(NnGemm, BatchedHeadBlocks) {
  const int samples = 3, heads = 4, s = 11, d = 5, ld = 2 * heads * d;
  std::vector<double> x;
  auto X = fill<double>(size_t(samples) * s * ld, 4, x);
  Kokkos::View<double*> C("C", size_t(samples) * heads * s * s);
  using sp::nn::Batched;
  sp::nn::gemm_batched<double>(samples * heads, s, s, d,
                               Batched<const double>{X.data(), ld, Op::N, int64_t(s) * ld, d, heads},
                               Batched<const double>{X.data() + heads * d, ld, Op::T, int64_t(s) * ld, d, heads},
                               Batched<double>{C.data(), s, Op::N, int64_t(s) * s});
  const auto got = host(C);
  sp::Comparator cmp("gamma_d |A||B|");
  for (int smp = 0; smp < samples; ++smp)
    for (int h = 0; h < heads; ++h)
      for (int q = 0; q < s; ++q)
        for (int k = 0; k < s; ++k) {
          long double v = 0, av = 0;
          for (int e = 0; e < d; ++e) {
            const long double p = (long double)x[size_t(smp * s + q) * ld + h * d + e] *
                                  x[size_t(smp * s + k) * ld + heads * d + h * d + e];
            v += p, av += std::fabs(p);
          }
          cmp.add(got[((size_t(smp) * heads + h) * s + q) * s + k], double(v), sp::gamma_n(d, 0x1p-53) * double(av));
        }
  EXPECT_TRUE(cmp.result().passed());
  EXPECT_EQ(cmp.result().checked, samples * heads * s * s);
}

// Linear layers in both weight layouts, with the bias as one more term.
template <class S>
void check_linear(sp::nn::Weights w) {
  const int B = 13, in = 270, out = 21;
  const sp::nn::LinearShape sh{B, in, out, w};
  const bool oi = w == sp::nn::Weights::out_in;
  std::vector<double> x, wt, bias, dy, unused;
  auto X = fill<S>(size_t(B) * in, 5, x);
  auto W = fill<S>(size_t(in) * out, 6, wt);
  auto b = fill<S>(out, 7, bias);
  auto dY = fill<S>(size_t(B) * out, 8, dy);
  auto Y = fill<S>(size_t(B) * out, 9, unused), dX = fill<S>(size_t(B) * in, 9, unused);
  auto dW = fill<S>(size_t(in) * out, 9, unused), db = fill<S>(out, 9, unused);
  sp::nn::linear_forward<S>(sh, X.data(), W.data(), b.data(), Y.data());
  sp::nn::linear_backward_input(sh, dY.data(), W.data(), dX.data());
  // Two calls over [0, 8) and [8, out): the output features may be split.
  sp::nn::linear_backward_weight<S, S, S>(sh, X.data(), dY.data(), dW.data(), db.data(), 0, 8);
  sp::nn::linear_backward_weight<S, S, S>(sh, X.data(), dY.data(), dW.data(), db.data(), 8, out);

  std::vector<double> bias_rows(size_t(B) * out);
  for (size_t i = 0; i < bias_rows.size(); ++i) bias_rows[i] = bias[i % out];
  auto fwd = ref::gemm(B, out, in, x, false, wt, oi, &bias_rows);
  auto r = compare<S>(host(Y), fwd, in + 1);
  EXPECT_TRUE(r.passed()) << "forward: " << r.wrong << " wrong";
  auto bx = ref::gemm(B, in, out, dy, false, wt, !oi);
  r = compare<S>(host(dX), bx, out);
  EXPECT_TRUE(r.passed()) << "dX: " << r.wrong << " wrong";
  auto bw = oi ? ref::gemm(out, in, B, dy, true, x, false) : ref::gemm(in, out, B, x, true, dy, false);
  r = compare<S>(host(dW), bw, B);
  EXPECT_TRUE(r.passed()) << "dW: " << r.wrong << " wrong";
  std::vector<double> ones(B, 1.0);
  auto bb = ref::gemm(1, out, B, ones, false, dy, false);
  r = compare<S>(host(db), bb, B);
  EXPECT_TRUE(r.passed()) << "db: " << r.wrong << " wrong";
}

TEST(NnLinear, Fp64BothLayouts) {
  check_linear<double>(sp::nn::Weights::out_in);
  check_linear<double>(sp::nn::Weights::in_out);
}
TEST(NnLinear, Fp32BothLayouts) {
  check_linear<float>(sp::nn::Weights::out_in);
  check_linear<float>(sp::nn::Weights::in_out);
}
TEST(NnLinear, Fp16Storage) { check_linear<fp16_t>(sp::nn::Weights::in_out); }

}  // namespace
