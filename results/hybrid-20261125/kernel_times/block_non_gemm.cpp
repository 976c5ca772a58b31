// Diagnostic, not part of the build: the non-GEMM parts of one block at the step's
// verification shape (8 samples x 64 tokens, h 128, 4 heads of 32, f 512),
// fp32; timing by the harness's service.
#include <Kokkos_Core.hpp>
#include <cstdio>
#include "kernels/modelparallel/attention_core.hpp"
#include "kernels/nn/activations.hpp"
#include "kernels/nn/layernorm.hpp"
#include "scaleproof/measure.hpp"
int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    const int b = 8, s = 64, heads = 4, d = 32, h = 128, f = 512, n = b * s;
    sp::mp::AttnShape sh{b, s, heads, d};
    Kokkos::View<float*> qkv("qkv", size_t(n) * 3 * h), o("o", size_t(n) * h), p("p", size_t(b) * heads * s * s),
        dS("ds", size_t(b) * heads * s * s), g("g", size_t(n) * 3 * h), dO("do", size_t(n) * h);
    Kokkos::View<float*> x("x", size_t(n) * h), y("y", size_t(n) * h), mu("mu", n), rs("rs", n), gam("g", h),
        bet("b", h);
    Kokkos::View<float*> z("z", size_t(n) * f), hh("hh", size_t(n) * f);
    Kokkos::deep_copy(gam, 1.0f);
    auto time = [&](const char* what, double flops, double bytes, auto fn) {
      auto call = [&] {
        fn();
        Kokkos::fence();
      };
      call();
      const double t = sp::per_call_seconds(call, 0.05, 2, 3);
      std::printf("%-22s %.3f ms  %.2f GFLOP/s  %.2f GB/s\n", what, t * 1e3, flops / t / 1e9, bytes / t / 1e9);
    };
    const double af = 2.0 * b * heads * (2.0 * s * s * d);
    time("attention_forward", af, 4.0 * 2 * b * heads * s * s,
         [&] { sp::mp::attention_forward<float>(sh, qkv.data(), o.data(), p.data()); });
    time("attention_backward", 2 * af, 4.0 * 3 * b * heads * s * s,
         [&] { sp::mp::attention_backward<float>(sh, qkv.data(), p.data(), dO.data(), dS.data(), g.data()); });
    time("layernorm_forward", 0, 4.0 * (2.0 * n * h + 2 * n), [&] {
      sp::nn::layernorm_forward<float>(n, h, x.data(), gam.data(), bet.data(), 1e-5f, y.data(), mu.data(), rs.data());
    });
    time("gelu_forward", 0, 4.0 * 2 * n * f, [&] { sp::nn::gelu_forward(z.data(), hh.data(), int64_t(n) * f); });
    time("add", 0, 4.0 * 3 * n * h, [&] { sp::nn::add(x.data(), y.data(), y.data(), int64_t(n) * h); });
  }
  Kokkos::finalize();
}
