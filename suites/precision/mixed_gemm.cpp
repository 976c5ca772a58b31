// Mixed-precision GEMM: A and B stored in fp32, fp16 or bf16, products
// accumulated in fp32 (docs/precision.md "Mixed precision"). The storage width sets
// the bytes moved (2 vs 4 per element), so the roofline positions of the
// three dtypes differ at the same FLOP count.
#include <Kokkos_Core.hpp>

#include "kernels/precision/float16.hpp"
#include "kernels/precision/gemm_lowp.hpp"
#include "reference/precision/float16_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"

#ifdef SP_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

namespace {

using sp::precision::bf16_t;
using sp::precision::fp16_t;
template <class T>
using Mat = Kokkos::View<T**, Kokkos::LayoutRight>;

double element_bytes(const std::string& dtype) { return dtype == "fp32" ? 4 : 2; }

// Reference decoding of a stored element (independent of the kernel's to_float).
double ref_value(float x) { return x; }
double ref_value(fp16_t x) { return sp::reference::decode16(x.bits, sp::reference::kBinary16); }
double ref_value(bf16_t x) { return sp::reference::decode16(x.bits, sp::reference::kBfloat16); }
// Does the stored pattern equal the reference rounding of the fp32 input?
bool stored_ok(float s, float x) { return s == x; }
bool stored_ok(fp16_t s, float x) { return s.bits == sp::reference::encode16(x, sp::reference::kBinary16); }
bool stored_ok(bf16_t s, float x) { return s.bits == sp::reference::encode16(x, sp::reference::kBfloat16); }

class MixedGemm : public sp::Technique {
 public:
  MixedGemm() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "mp_gemm";
    i.family = "precision";
    i.summary = "C(fp32) = A B with A, B stored in fp32/fp16/bf16, fp32 accumulation";
    auto mnk = [](const char* t, int m, int n, int k) {
      return sp::Params{{"dtype", t}, {"M", std::to_string(m)}, {"N", std::to_string(n)}, {"K", std::to_string(k)}};
    };
    for (const char* t : {"fp32", "fp16", "bf16"}) {
      for (auto [m, n, k] : {std::tuple{1, 1, 1}, {33, 17, 300}, {9, 70, 5}})
        i.param_sets.push_back({sp::Size::conformance, mnk(t, m, n, k)});
      i.param_sets.push_back({sp::Size::small, mnk(t, 256, 256, 256)});
      i.param_sets.push_back({sp::Size::medium, mnk(t, 1024, 1024, 1024)});
      i.param_sets.push_back({sp::Size::large, mnk(t, 2048, 2048, 2048)});
    }
    i.variants = {sp::Variant::kernel("kokkos")};
#ifdef SP_HAVE_CUBLAS
    // cublasGemmEx with 16-bit inputs and CUBLAS_COMPUTE_32F: the vendor
    // form of the same computation (tensor cores on a GPU). Reported next to
    // the Kokkos kernel, not judged against it.
    i.variants.push_back(sp::Variant::vendor("cublas", "cublas", sp::MemoryNeed::device));
#endif
    // A plain row-streaming kernel (no register tiling): declared to reach at
    // least 2% of the fp32 FMA roof; the point here is the relative position
    // of the dtypes, the tuned fp32 kernel is the gemm family's.
    i.tol.roof_min = 0.02;
    i.source = "docs/precision.md Mixed precision, Roofline; FLOPs 2MNK, bytes (MK+KN)*elt + MN*4";
    return i;
  }
  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    const auto& t = p.s("dtype");
    if (t != "fp32" && t != "fp16" && t != "bf16")
      throw sp::InputError("mp_gemm: unknown dtype '" + t + "' (fp32, fp16 or bf16)");
    if (p.i("M") * p.i("K") > (int64_t(1) << 30) || p.i("K") * p.i("N") > (int64_t(1) << 30))
      throw sp::InputError("mp_gemm: matrices above 2^30 elements are not supported");
  }

  sp::Counts counts(const sp::Params& p, int) const override {
    const double m = p.i("M"), n = p.i("N"), k = p.i("K"), es = element_bytes(p.s("dtype"));
    sp::Counts c;
    c.flops = 2 * m * n * k;
    c.bytes_read = (m * k + k * n) * es;
    c.bytes_written = m * n * 4;  // the fp32 result
    c.dtype = p.s("dtype");       // no fp16/bf16 roof is probed: Machine falls back to fp32's
    return c;
  }

  void setup(const sp::Params& p, int) override {
    dtype_ = p.s("dtype");
    M_ = p.i("M"), N_ = p.i("N"), K_ = p.i("K");
    hA_.resize(M_ * K_), hB_.resize(K_ * N_);
    // Values spanning several binades with mixed signs, so 16-bit rounding is exercised.
    for (int64_t x = 0; x < M_ * K_; ++x) hA_[x] = float((x * 37 % 101) - 50) / 64.0f * (1.0f + float(x % 13) / 7.0f);
    for (int64_t x = 0; x < K_ * N_; ++x) hB_[x] = float((x * 53 % 97) - 48) / 32.0f + 0.001f * float(x % 7);
    C_ = Mat<float>("C", M_, N_);
    if (dtype_ == "fp32")
      fill(a32_, b32_);
    else if (dtype_ == "fp16")
      fill(a16_, b16_);
    else
      fill(abf_, bbf_);
  }

  void run(const std::string& variant) override {
#ifdef SP_HAVE_CUBLAS
    if (variant == "cublas") {
      run_cublas();
      return;
    }
#endif
    (void)variant;
    if (dtype_ == "fp32")
      sp::kernels::gemm_lowp<float, float>(a32_, b32_, C_);
    else if (dtype_ == "fp16")
      sp::kernels::gemm_lowp<fp16_t, float>(a16_, b16_, C_);
    else
      sp::kernels::gemm_lowp<bf16_t, float>(abf_, bbf_, C_);
  }

  sp::CheckResult check(const std::string&) override {
    if (dtype_ == "fp32") return check_t(a32_, b32_);
    if (dtype_ == "fp16") return check_t(a16_, b16_);
    return check_t(abf_, bbf_);
  }

  void report_counters(const std::string&, std::map<std::string, double>& out) override {
    out["element_bytes"] = element_bytes(dtype_);
  }

  void teardown() override {
    a32_ = b32_ = {}, a16_ = b16_ = {}, abf_ = bbf_ = {}, C_ = {};
#ifdef SP_HAVE_CUBLAS
    if (handle_) cublasDestroy(handle_);
    handle_ = nullptr;
#endif
  }

 private:
#ifdef SP_HAVE_CUBLAS
  // Row-major C = A B as column-major C^T = B^T A^T. fp16_t and bf16_t have
  // the bit layouts of CUDA_R_16F and CUDA_R_16BF.
  void run_cublas() {
    if (!handle_) cublasCreate(&handle_);
    const float one = 1, zero = 0;
    const void *a = nullptr, *b = nullptr;
    cudaDataType_t t = CUDA_R_32F;
    if (dtype_ == "fp32")
      a = a32_.data(), b = b32_.data();
    else if (dtype_ == "fp16")
      a = a16_.data(), b = b16_.data(), t = CUDA_R_16F;
    else
      a = abf_.data(), b = bbf_.data(), t = CUDA_R_16BF;
    cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, int(N_), int(M_), int(K_), &one, b, t, int(N_), a, t, int(K_),
                 &zero, C_.data(), CUDA_R_32F, int(N_), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  }
  cublasHandle_t handle_ = nullptr;
#endif
  template <class S>
  void fill(Mat<S>& A, Mat<S>& B) {
    A = Mat<S>("A", M_, K_), B = Mat<S>("B", K_, N_);
    auto hA = Kokkos::create_mirror_view(A);
    auto hB = Kokkos::create_mirror_view(B);
    for (int64_t i = 0; i < M_; ++i)
      for (int64_t k = 0; k < K_; ++k) hA(i, k) = sp::precision::from_f32<S>(hA_[i * K_ + k]);
    for (int64_t k = 0; k < K_; ++k)
      for (int64_t j = 0; j < N_; ++j) hB(k, j) = sp::precision::from_f32<S>(hB_[k * N_ + j]);
    Kokkos::deep_copy(A, hA);
    Kokkos::deep_copy(B, hB);
  }

  template <class S>
  sp::CheckResult check_t(const Mat<S>& A, const Mat<S>& B) {
    auto hA = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
    auto hB = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
    auto hC = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C_);
    // 1. Storage: every stored element is the round-to-nearest-even image of its input.
    sp::Comparator stored("stored bits == reference RNE encoding");
    for (int64_t i = 0; i < M_; ++i)
      for (int64_t k = 0; k < K_; ++k) stored.add(stored_ok(hA(i, k), hA_[i * K_ + k]) ? 0 : 1, 0, 0);
    for (int64_t k = 0; k < K_; ++k)
      for (int64_t j = 0; j < N_; ++j) stored.add(stored_ok(hB(k, j), hB_[k * N_ + j]) ? 0 : 1, 0, 0);
    // 2. Product: against a long double reference on the SAME rounded inputs.
    // A product of two 16-bit values (<= 11-bit significands) is exact in
    // fp32, so only the K-1 fp32 additions round: |err| <= gamma_K(u32) *
    // sum_k |a_ik b_kj| (Higham 3.5). For fp32 storage the products round too,
    // which gamma_K (K roundings per path) still covers.
    const double g = sp::gamma_n(static_cast<double>(K_), sp::unit_roundoff<float>());
    sp::Comparator cmp("gamma_K(fp32)*sum|a||b| on the 16-bit-rounded inputs (Higham 3.5)");
    std::vector<long double> rowA(K_);
    for (int64_t i = 0; i < M_; ++i) {
      for (int64_t k = 0; k < K_; ++k) rowA[k] = ref_value(hA(i, k));
      for (int64_t j = 0; j < N_; ++j) {
        long double s = 0, sa = 0;
        for (int64_t k = 0; k < K_; ++k) {
          const long double p = rowA[k] * static_cast<long double>(ref_value(hB(k, j)));
          s += p;
          sa += p < 0 ? -p : p;
        }
        cmp.add(hC(i, j), static_cast<double>(s), g * static_cast<double>(sa));
      }
    }
    sp::CheckResult r = cmp.result();
    if (stored.result().wrong) r.note = std::to_string(stored.result().wrong) + " stored elements differ from RNE";
    r.wrong += stored.result().wrong;
    r.checked += stored.result().checked;
    return r;
  }

  std::string dtype_;
  int64_t M_ = 0, N_ = 0, K_ = 0;
  std::vector<float> hA_, hB_;
  Mat<float> a32_, b32_, C_;
  Mat<fp16_t> a16_, b16_;
  Mat<bf16_t> abf_, bbf_;
};

SP_REGISTER_TECHNIQUE(MixedGemm);

}  // namespace
