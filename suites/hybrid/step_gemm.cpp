// step_gemm: the product the composed step and every layer of the shared
// layer library run, nn::gemm (kernels/nn/gemm.hpp): C = op(A) op(B) with A
// and B in the storage type, at one shape and operand layout (`ops`: nn; nt
// = A B^T and tn = A^T B, the backward's products). C is where the step puts
// that product: an activation or its gradient (nn, nt) in the storage type
// (fp32 and fp64 accumulate in themselves, fp16 and bf16 in fp32 and round C
// once), a weight gradient (tn) in the accumulation type, as the step keeps
// its gradients (no rounding pass). The timed loop
// cycles over `sets` copies of (A, B, C), one product per call: with one copy
// the operands stay in cache from call to call, as in a GEMM benchmark; with
// copies that add up to more than the last-level cache every call reads them
// from memory, as a training step's products do (each block's weights and
// activations are touched once per pass). The planner ranks its layouts with
// this technique's rate at the block's largest shape (docs/planner.md,
// "Verification"; each verified layout's rates come from a pass of the
// step's blocks, block_pass_rates.hpp); the
// project's GEMM against the vendor's is technique gemm.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/gemm/gemm_extents.hpp"
#include "kernels/hybrid/layout.hpp"
#include "kernels/hybrid/time_model.hpp"
#include "kernels/nn/gemm.hpp"
#include "reference/gemm/gemm_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"
#include "suites/hybrid/per_storage.hpp"
#include "suites/hybrid/step_sets.hpp"
#include "suites/hybrid/touched_buffer.hpp"

namespace {

double element_bytes(const std::string& dtype) { return sp::hybrid::element_bytes(sp::hybrid::parse_storage(dtype)); }

// The rounding of C into storage type S: none where S is the accumulator.
template <class S>
constexpr double store_roundoff() {
  if constexpr (std::is_same<S, typename sp::nn::AccOf<S>::type>::value)
    return 0.0;
  else
    return sp::precision::StorageInfo<S>::unit_roundoff;
}

// Copies of the operands, and of the product in storage type S (C) or in
// its accumulation type (G, a weight gradient's).
template <class S>
struct Sets {
  std::vector<Kokkos::View<S*>> A, B, C;
  std::vector<Kokkos::View<typename sp::nn::AccOf<S>::type*>> G;
  void clear() { A.clear(), B.clear(), C.clear(), G.clear(); }
};

class StepGemm : public sp::Technique {
 public:
  StepGemm() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "step_gemm";
    i.family = "hybrid";
    i.summary = "the layer library's product nn::gemm at one shape and storage type, operands in or out of cache";
    auto set = [](const char* t, int m, int n, int k, int sets, const char* ops = "nn") {
      return sp::Params{{"dtype", t},
                        {"M", std::to_string(m)},
                        {"N", std::to_string(n)},
                        {"K", std::to_string(k)},
                        {"sets", std::to_string(sets)},
                        {"ops", ops}};
    };
    for (const char* t : {"fp32", "fp64", "fp16", "bf16"})
      for (const char* ops : {"nn", "nt", "tn"}) {
        // Edge shapes (no multiple of any tile), one and several copies.
        i.param_sets.push_back({sp::Size::conformance, set(t, 33, 17, 65, 1, ops)});
        i.param_sets.push_back({sp::Size::conformance, set(t, 7, 513, 3, 3, ops)});
      }
    // One rank's tokens of the planner's scaled-down shape times the MLP
    // width, in cache and from memory (64 copies: 96 MiB in fp32).
    for (const char* t : {"fp32", "bf16"})
      for (int sets : {1, 64}) i.param_sets.push_back({sp::Size::small, set(t, 512, 512, 128, sets)});
    i.param_sets.push_back({sp::Size::medium, set("fp32", 2048, 2048, 512, 1)});
    i.param_sets.push_back({sp::Size::medium, set("fp32", 2048, 2048, 512, 16)});
    i.param_rules = {{"sets", 1, 4096}};
    i.variants = {sp::Variant::kernel("kokkos")};
    // The tiled kernel of technique gemm, whose roofline band this repeats.
    i.tol.roof_min = 0.25;
    i.source = "docs/planner.md Verification; docs/roofline.md Roofline; FLOPs 2MNK";
    return i;
  }

  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    const auto& t = p.s("dtype");
    if (t != "fp32" && t != "fp64" && t != "fp16" && t != "bf16")
      throw sp::InputError("step_gemm: unknown dtype '" + t + "' (fp32, fp64, fp16 or bf16)");
    sp::hybrid::GemmOps ops;
    if (!sp::hybrid::parse_gemm_ops(p.s_or("ops", "nn"), ops))
      throw sp::InputError("step_gemm: unknown ops '" + p.s("ops") + "' (nn, nt = A B^T or tn = A^T B)");
    const int64_t m = p.i("M"), n = p.i("N"), k = p.i("K");
    if (!sp::kernels::gemm_extents_fit(m, n, k))
      throw sp::InputError(std::string("step_gemm: ") + sp::kernels::kGemmExtentsRule);
    const double bytes =
        double(p.i("sets")) * sp::hybrid::gemm_set_elements(double(m), double(n), double(k)) * element_bytes(t);
    if (bytes > double(int64_t(1) << 34))
      throw sp::InputError("step_gemm: sets x (M K + K N + M N) elements exceed 16 GiB");
  }

  sp::Counts counts(const sp::Params& p, int) const override {
    const double m = p.i("M"), n = p.i("N"), k = p.i("K"), es = element_bytes(p.s("dtype"));
    sp::Counts c;
    c.flops = 2 * m * n * k;
    c.bytes_read = (m * k + k * n) * es;
    // A weight gradient (tn) is written in the accumulation type: fp32, or fp64 for fp64.
    const bool grad = p.s_or("ops", "nn") == "tn";
    c.bytes_written = m * n * (grad ? std::max(es, 4.0) : es);
    c.dtype = p.s("dtype");  // no 16-bit roof is probed: the fp32 one stands in
    return c;
  }

  void setup(const sp::Params& p, int) override {
    dtype_ = p.s("dtype");
    M_ = p.i("M"), N_ = p.i("N"), K_ = p.i("K");
    sets_ = static_cast<int>(p.i("sets"));
    sp::hybrid::parse_gemm_ops(p.s_or("ops", "nn"), ops_);
    next_ = last_ = 0;
    hA_.resize(M_ * K_), hB_.resize(K_ * N_);
    // Mixed signs and magnitudes; every value is a multiple of 2^-7 with at
    // most 8 significant bits, exact in every storage type, so the reference
    // multiplies the values the kernel does.
    for (int64_t x = 0; x < M_ * K_; ++x) hA_[x] = float((x * 37 % 101) - 50) / 64.0f;
    for (int64_t x = 0; x < K_ * N_; ++x) hB_[x] = float((x * 53 % 97) - 48) / 32.0f + float(x % 7) / 128.0f;
    data_.with(dtype_, [&](auto& s) { fill(s); });
  }

  void run(const std::string&) override {
    data_.with(dtype_, [&](auto& s) { run_t(s); });
  }

  sp::CheckResult check(const std::string&) override {
    return data_.with(dtype_, [&](auto& s) { return check_t(s); });
  }

  void teardown() override { data_.clear(); }

 private:
  bool a_transposed() const { return ops_ == sp::hybrid::GemmOps::tn; }
  bool b_transposed() const { return ops_ == sp::hybrid::GemmOps::nt; }

  // hA_ and hB_ hold op(A) (M x K) and op(B) (K x N); a transposed operand
  // is stored as its transpose (A: K x M, B: N x K), row-major.
  template <class S>
  void fill(Sets<S>& s) {
    Kokkos::View<S*, Kokkos::HostSpace> a("step_gemm_ha", size_t(M_ * K_)), b("step_gemm_hb", size_t(K_ * N_));
    for (int64_t i = 0; i < M_; ++i)
      for (int64_t k = 0; k < K_; ++k)
        a(a_transposed() ? k * M_ + i : i * K_ + k) = sp::nn::store_as<S>(hA_[i * K_ + k], 0);
    for (int64_t k = 0; k < K_; ++k)
      for (int64_t j = 0; j < N_; ++j)
        b(b_transposed() ? j * K_ + k : k * N_ + j) = sp::nn::store_as<S>(hB_[k * N_ + j], 0);
    s.clear();
    // Every product writes all of its C (or G) and reads none of it.
    using Acc = typename sp::nn::AccOf<S>::type;
    for (int q = 0; q < sets_; ++q) {
      s.A.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::DefaultExecutionSpace::memory_space(), a));
      s.B.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::DefaultExecutionSpace::memory_space(), b));
      if (a_transposed())
        s.G.push_back(sp::hybrid::touched_buffer<Acc>("step_gemm_g", size_t(M_ * N_)));
      else
        s.C.push_back(sp::hybrid::touched_buffer<S>("step_gemm_c", size_t(M_ * N_)));
    }
  }

  template <class S>
  void run_t(Sets<S>& s) {
    const int q = next_;
    next_ = (next_ + 1) % sets_;
    using sp::nn::Op;
    const bool ta = a_transposed(), tb = b_transposed();
    if (ta)
      sp::nn::gemm(Op::T, Op::N, int(M_), int(N_), int(K_), s.A[q].data(), M_, s.B[q].data(), N_, s.G[q].data(), N_);
    else
      sp::nn::gemm(Op::N, tb ? Op::T : Op::N, int(M_), int(N_), int(K_), s.A[q].data(), K_, s.B[q].data(), tb ? K_ : N_,
                   s.C[q].data(), N_);
    last_ = q;
  }

  // Every element is a sum of K products (Higham, eq. 3.5): |error| <=
  // gamma_K(u_acc) (|A||B|)_ij, plus one rounding u_S |C_ij| where C is
  // stored narrower than the accumulator (none for a weight gradient, kept
  // in the accumulation type). The inputs are exact in S, so the reference
  // multiplies the same values.
  template <class S>
  sp::CheckResult check_t(Sets<S>& s) {
    using Acc = typename sp::nn::AccOf<S>::type;
    std::vector<long double> ref, absab;
    sp::reference::gemm_ref<float>(M_, N_, K_, hA_, hB_, ref, absab);
    const double g = sp::gamma_n(static_cast<double>(K_), sp::unit_roundoff<Acc>());
    sp::Comparator cmp("gamma_K(acc)*(|A||B|)_ij + u_S |C_ij| (u_S = 0 for a weight gradient), Higham (3.5)");
    auto compare = [&](const auto& h, double u_store) {
      for (int64_t x = 0; x < M_ * N_; ++x) {
        const double r = static_cast<double>(ref[size_t(x)]);
        cmp.add(double(sp::nn::load(h(size_t(x)))), r,
                g * static_cast<double>(absab[size_t(x)]) + u_store * std::abs(r));
      }
    };
    if (a_transposed())
      compare(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.G[size_t(last_)]), 0.0);
    else
      compare(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.C[size_t(last_)]), store_roundoff<S>());
    return cmp.result();
  }

  std::string dtype_;
  int64_t M_ = 0, N_ = 0, K_ = 0;
  int sets_ = 1, next_ = 0, last_ = 0;
  sp::hybrid::GemmOps ops_ = sp::hybrid::GemmOps::nn;
  std::vector<float> hA_, hB_;
  sp::hybrid::PerStorage<Sets> data_;
};

SP_REGISTER_TECHNIQUE(StepGemm);

}  // namespace
