// Diagnostic, not part of the build: nn::gemm per-call time at the step's shapes with
// N,N vs the transposes the backward uses; timing by the harness's service.
#include <Kokkos_Core.hpp>
#include <cstdio>
#include "kernels/nn/gemm.hpp"
#include "scaleproof/measure.hpp"
using sp::nn::Op;
int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    struct S {
      int m, n, k;
      Op ta, tb;
      const char* what;
    };
    const int n = 512, h = 128, f = 512, hl = 128;
    S shapes[] = {{n, f, h, Op::N, Op::N, "W1 fwd NN"},      {n, f, h, Op::N, Op::T, "dH = dy W2^T NT"},
                  {f, h, n, Op::N, Op::N, "f h n NN"},       {f, h, n, Op::T, Op::N, "dW2 = H^T dy TN"},
                  {n, h, f, Op::N, Op::N, "W2 fwd NN"},      {n, h, f, Op::N, Op::T, "dln = dZ W1^T NT"},
                  {h, 3 * hl, n, Op::N, Op::N, "h 3h n NN"}, {h, 3 * hl, n, Op::T, Op::N, "dWqkv TN"}};
    for (const S& s : shapes) {
      Kokkos::View<float*> A("a", size_t(s.m) * s.k), B("b", size_t(s.k) * s.n), C("c", size_t(s.m) * s.n);
      const int64_t lda = s.ta == Op::N ? s.k : s.m, ldb = s.tb == Op::N ? s.n : s.k;
      auto call = [&] {
        sp::nn::gemm(s.ta, s.tb, s.m, s.n, s.k, A.data(), lda, B.data(), ldb, C.data(), s.n);
        Kokkos::fence();
      };
      call();
      const double t = sp::per_call_seconds(call, 0.05, 2, 3);
      std::printf("%-18s %4d x %4d x %4d  %.3f ms  %.2f GFLOP/s\n", s.what, s.m, s.n, s.k, t * 1e3,
                  2.0 * s.m * s.n * s.k / t / 1e9);
    }
  }
  Kokkos::finalize();
}
