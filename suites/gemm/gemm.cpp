// GEMM: the project's tiled Kokkos kernel against OpenBLAS (vendor baseline,
// same threads, same run) and a naive reference. FLOPs 2MNK; compulsory bytes
// (M*K + K*N + M*N) * sizeof(T) (the roofline's minimum traffic).
#include <Kokkos_Core.hpp>
#include <algorithm>

#include "reference/gemm/gemm_ref.hpp"
#include "kernels/gemm/gemm_extents.hpp"
#include "kernels/gemm/gemm_tiled.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "scaleproof/registry.hpp"

#ifdef SP_HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef SP_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

namespace {

template <class T>
struct Data {
  Kokkos::View<T**, Kokkos::LayoutRight> A, B, C;
  std::vector<T> hA, hB;
};

class Gemm : public sp::Technique {
 public:
  Gemm() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "gemm";
    i.family = "gemm";
    i.summary = "C = A B, tiled with team scratch (fp32, fp64)";
    auto mnk = [](const char* t, int m, int n, int k) {
      return sp::Params{{"dtype", t}, {"M", std::to_string(m)}, {"N", std::to_string(n)}, {"K", std::to_string(k)}};
    };
    for (const char* t : {"fp32", "fp64"}) {
      // Edge cases: 1x1x1, sizes that are not multiples of any tile, and ones crossing block edges.
      for (auto [m, n, k] : {std::tuple{1, 1, 1}, {33, 17, 65}, {101, 259, 300}, {7, 513, 3}})
        i.param_sets.push_back({sp::Size::conformance, mnk(t, m, n, k)});
      i.param_sets.push_back({sp::Size::small, mnk(t, 256, 256, 256)});
      for (int n : {512, 1024, 2048}) i.param_sets.push_back({sp::Size::medium, mnk(t, n, n, n)});
      // Tall and skinny: a linear layer's forward product over a token
      // batch (rows: tokens, K and N: the hidden widths), as nn::linear and
      // the training families run it.
      i.param_sets.push_back({sp::Size::medium, mnk(t, 8192, 256, 256)});
      i.param_sets.push_back({sp::Size::large, mnk(t, 4096, 4096, 4096)});
    }
    i.variants = {sp::Variant::kernel("kokkos")};
#ifdef SP_HAVE_OPENBLAS
    i.variants.push_back(sp::Variant::vendor("openblas", "openblas", sp::MemoryNeed::host));
    i.baseline = "openblas";
    i.headline = {sp::kHeadlineVsBaseline};
#endif
#ifdef SP_HAVE_CUBLAS
    i.variants.push_back(sp::Variant::vendor("cublas", "cublas", sp::MemoryNeed::device));
    i.baseline = "cublas";  // on a GPU build the vendor baseline is cuBLAS
#endif
    // Accepted: at least 0.9 of the vendor library's throughput on the same threads, the
    // suite's target for a GEMM every training family multiplies with; the roofline band
    // expects a tiled GEMM to reach at least 25% of the measured FMA peak.
    i.tol.min_vs_baseline = 0.9;
    i.tol.roof_min = 0.25;
    i.source = "docs/roofline.md Roofline; FLOPs 2MNK";
    return i;
  }
  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    const auto& t = p.s("dtype");
    if (t != "fp32" && t != "fp64") throw sp::InputError("gemm: unknown dtype '" + t + "' (fp32 or fp64)");
    if (!sp::kernels::gemm_extents_fit(p.i("M"), p.i("N"), p.i("K")))
      throw sp::InputError(std::string("gemm: ") + sp::kernels::kGemmExtentsRule);
  }

  sp::Counts counts(const sp::Params& p, int) const override {
    const double m = p.i("M"), n = p.i("N"), k = p.i("K");
    const double es = p.s("dtype") == "fp32" ? 4 : 8;
    sp::Counts c;
    c.flops = 2 * m * n * k;
    c.bytes_read = (m * k + k * n) * es;
    c.bytes_written = m * n * es;
    c.dtype = p.s("dtype");
    return c;
  }

  void setup(const sp::Params& p, int) override {
    f32_ = p.s("dtype") == "fp32";
    M_ = p.i("M"), N_ = p.i("N"), K_ = p.i("K");
    if (f32_)
      init(d32_);
    else
      init(d64_);
#ifdef SP_HAVE_OPENBLAS
    openblas_set_num_threads(sp::kx::concurrency());
#endif
  }

  // The throughput verdict compares the kernel and the vendor call by call
  // in turn (one settling call before each timed one), not two separate
  // timed loops that can fall into different states of a shared machine.
  std::vector<sp::Probe> probes(const std::string& variant) const override { return paired_with_baseline(variant); }

  void run(const std::string& variant) override {
    if (f32_)
      run_t(d32_, variant);
    else
      run_t(d64_, variant);
  }

  sp::CheckResult check(const std::string&) override { return f32_ ? check_t(d32_) : check_t(d64_); }

  void teardown() override {
    d32_ = {}, d64_ = {};
#ifdef SP_HAVE_CUBLAS
    if (handle_) cublasDestroy(handle_);
    handle_ = nullptr;
#endif
  }

 private:
  template <class T>
  void init(Data<T>& d) {
    d.A = decltype(d.A)("A", M_, K_);
    d.B = decltype(d.B)("B", K_, N_);
    d.C = decltype(d.C)("C", M_, N_);
    d.hA.resize(M_ * K_), d.hB.resize(K_ * N_);
    // Mixed signs and magnitudes so cancellations occur and the bound is exercised.
    for (int64_t x = 0; x < M_ * K_; ++x) d.hA[x] = T((x * 37 % 101) - 50) / T(64);
    for (int64_t x = 0; x < K_ * N_; ++x) d.hB[x] = T((x * 53 % 97) - 48) / T(32) + T(0.001) * T(x % 7);
    using H = Kokkos::View<const T**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::deep_copy(d.A, H(d.hA.data(), M_, K_));
    Kokkos::deep_copy(d.B, H(d.hB.data(), K_, N_));
  }

  template <class T>
  void run_t(Data<T>& d, const std::string& variant) {
    if (variant == "kokkos") {
      sp::kernels::gemm_tiled<T>(d.A, d.B, d.C);
      return;
    }
#ifdef SP_HAVE_CUBLAS
    if (variant == "cublas") {
      if (!handle_) cublasCreate(&handle_);
      // Row-major C = A B is column-major C^T = B^T A^T: swap the operands.
      const T one = 1, zero = 0;
      if constexpr (std::is_same<T, float>::value)
        cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, N_, M_, K_, &one, d.B.data(), N_, d.A.data(), K_, &zero,
                    d.C.data(), N_);
      else
        cublasDgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, N_, M_, K_, &one, d.B.data(), N_, d.A.data(), K_, &zero,
                    d.C.data(), N_);
      return;
    }
#endif
#ifdef SP_HAVE_OPENBLAS
    // OpenBLAS runs on host memory; with a device back end this variant is unavailable.
    if constexpr (std::is_same<T, float>::value)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M_, N_, K_, 1.0f, d.A.data(), K_, d.B.data(), N_, 0.0f,
                  d.C.data(), N_);
    else
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M_, N_, K_, 1.0, d.A.data(), K_, d.B.data(), N_, 0.0,
                  d.C.data(), N_);
#endif
  }

  template <class T>
  sp::CheckResult check_t(Data<T>& d) {
    std::vector<long double> ref, absab;
    sp::reference::gemm_ref<T>(M_, N_, K_, d.hA, d.hB, ref, absab);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d.C);
    // Any summation order of a length-K dot product errs by at most
    // gamma_K * (|A||B|)_ij (Higham, eq. 3.5); the long double reference's own
    // error is below 2^-64 relative and is neglected.
    const double g = sp::gamma_n(static_cast<double>(K_), sp::unit_roundoff<T>());
    sp::Comparator cmp("gamma_K*(|A||B|)_ij, Higham (3.5)");
    for (int64_t i = 0; i < M_; ++i)
      for (int64_t j = 0; j < N_; ++j)
        cmp.add(h(i, j), static_cast<double>(ref[i * N_ + j]), g * static_cast<double>(absab[i * N_ + j]));
    return cmp.result();
  }

  bool f32_ = true;
  int64_t M_ = 0, N_ = 0, K_ = 0;
  Data<float> d32_;
  Data<double> d64_;
#ifdef SP_HAVE_CUBLAS
  cublasHandle_t handle_ = nullptr;
#endif
};

SP_REGISTER_TECHNIQUE(Gemm);

}  // namespace
