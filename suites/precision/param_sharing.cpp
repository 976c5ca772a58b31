// Cross-layer parameter sharing (Lan et al. 2020, ALBERT; docs/compression.md):
// L linear + ReLU blocks of width H whose weights are one block's, reused L
// times ("shared"), against L distinct blocks ("unshared") and the shared
// stack on OpenBLAS (vendor baseline). Predicted and counted exactly:
// weight bytes 4 H^2 (shared) vs 4 H^2 L (unshared), a ratio of L, at the
// same 2 B H^2 L FLOPs. Checked per element against the propagated bound of
// reference/precision/stack_ref.hpp.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>

#include "kernels/precision/layer_stack.hpp"
#include "reference/precision/stack_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "scaleproof/registry.hpp"
#ifdef SP_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

namespace pr = sp::precision;
constexpr double kU = 0x1p-24;

class ParamSharing : public sp::Technique {
 public:
  ParamSharing() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "param_sharing";
    i.family = "precision";
    i.summary = "one block's weights reused L times (ALBERT) vs L blocks: weight memory vs compute";
    auto set = [](int b, int h, int l) {
      return sp::Params{{"B", std::to_string(b)}, {"H", std::to_string(h)}, {"L", std::to_string(l)}};
    };
    for (auto [b, h, l] : {std::tuple{1, 1, 1}, {33, 64, 1}, {9, 40, 2}, {7, 19, 3}, {16, 32, 6}})
      i.param_sets.push_back({sp::Size::conformance, set(b, h, l)});
    i.param_sets.push_back({sp::Size::small, set(256, 256, 12)});
    i.param_sets.push_back({sp::Size::medium, set(1024, 768, 12)});
    i.param_sets.push_back({sp::Size::large, set(2048, 1024, 24)});
    i.variants = {sp::Variant::strategy("shared"), sp::Variant::strategy("unshared")};
#ifdef SP_HAVE_OPENBLAS
    i.variants.push_back(sp::Variant::vendor("openblas", "openblas", sp::MemoryNeed::host));
    i.baseline = "openblas";
#endif
    i.tol.roof_min = 0.0;  // reported against the fp32 roof, not judged
    i.headline = {"weight bytes unshared / shared", sp::kHeadlineVsBaseline};
    i.source = "Lan et al. 2020 (ALBERT); MODELS.md Roofline";
    return i;
  }
  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    if (p.i("B") * p.i("H") > (int64_t(1) << 30) ||
        double(p.i("H")) * double(p.i("H")) * double(p.i("L")) > double(int64_t(1) << 31))
      throw sp::InputError("param_sharing: activations above 2^30 or weights above 2^31 elements are not supported");
  }

  // The shared stack: one H x H weight read, each layer reads and writes B x H activations.
  sp::Counts counts(const sp::Params& p, int) const override {
    const double B = p.i("B"), H = p.i("H"), L = p.i("L");
    sp::Counts c;
    c.flops = 2 * B * H * H * L;
    c.bytes_read = 4 * (H * H + B * H * L);
    c.bytes_written = 4 * B * H * L;
    c.footprint = 4 * (H * H * (L + 1) + 3 * B * H);  // both weight sets and three activation buffers live
    c.dtype = "fp32";
    return c;
  }

  void setup(const sp::Params& p, int) override {
    B_ = int(p.i("B")), H_ = int(p.i("H")), L_ = int(p.i("L"));
    uint64_t st = 1234;
    auto uni = [&st] {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      return float(double(st >> 11) * 0x1p-53 * 2 - 1);
    };
    const float a = std::sqrt(6.0f / H_);  // He-uniform: ReLU keeps the activations' scale
    hx_.resize(size_t(B_) * H_);
    for (auto& v : hx_) v = uni();
    hw_.assign(L_, std::vector<float>(size_t(H_) * H_));
    for (auto& w : hw_)
      for (auto& v : w) v = a * uni();
    X_ = upload(hx_);
    for (auto& w : hw_) W_.push_back(upload(w));  // W_[0] is the shared block
    buf_a_ = Kokkos::View<float*>("act_a", size_t(B_) * H_);
    buf_b_ = Kokkos::View<float*>("act_b", size_t(B_) * H_);
    shared_ = std::vector<const float*>(L_, W_[0].data());
    for (auto& w : W_) unshared_.push_back(w.data());
#ifdef SP_HAVE_OPENBLAS
    openblas_set_num_threads(sp::kx::concurrency());
#endif
  }

  // Every variant runs from one setup(): the baseline is timed in turn with
  // the main variant inside its case.
  std::vector<sp::Probe> probes(const std::string& variant) const override { return paired_with_baseline(variant); }

  void run(const std::string& variant) override {
    if (variant == "shared")
      out_ = pr::stack_forward(B_, H_, X_.data(), shared_, buf_a_.data(), buf_b_.data());
    else if (variant == "unshared")
      out_ = pr::stack_forward(B_, H_, X_.data(), unshared_, buf_a_.data(), buf_b_.data());
    else {
#ifdef SP_HAVE_OPENBLAS
      const float* in = X_.data();
      float* out = buf_a_.data();
      const int64_t n = int64_t(B_) * H_;
      for (int l = 0; l < L_; ++l) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B_, H_, H_, 1.0f, in, H_, W_[0].data(), H_, 0.0f, out,
                    H_);
        for (int64_t x = 0; x < n; ++x) out[x] = out[x] < 0 ? 0.0f : out[x];
        in = out;
        out = out == buf_a_.data() ? buf_b_.data() : buf_a_.data();
      }
      out_ = const_cast<float*>(in);
#endif
    }
  }

  sp::CheckResult check(const std::string& variant) override {
    std::vector<const std::vector<float>*> ws;
    for (int l = 0; l < L_; ++l) ws.push_back(&hw_[variant == "unshared" ? l : 0]);
    std::vector<long double> y, bound;
    sp::reference::stack_ref(B_, H_, hx_, ws, sp::gamma_n(H_, kU), y, bound);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                 Kokkos::View<float*, Kokkos::MemoryUnmanaged>(out_, size_t(B_) * H_));
    sp::Comparator c("e_(l+1) = gamma_H (|y_l| + e_l)|W_l| + e_l |W_l|, e_0 = 0 (stack_ref.hpp)");
    for (size_t e = 0; e < y.size(); ++e) c.add(h(e), double(y[e]), double(bound[e]));
    return c.result();
  }

  void report_counters(const std::string& variant, std::map<std::string, double>& out) override {
    // Bytes of the distinct weight blocks each stack references, counted from the built views.
    auto bytes = [this](const std::vector<const float*>& ptrs) {
      double b = 0;
      for (size_t l = 0; l < ptrs.size(); ++l)
        if (std::find(ptrs.begin(), ptrs.begin() + l, ptrs[l]) == ptrs.begin() + l) b += W_[0].span() * sizeof(float);
      return b;
    };
    out["weight_bytes_shared"] = bytes(shared_);
    out["weight_bytes_unshared"] = bytes(unshared_);
    if (variant == "openblas") return;
    pr::FlopCount fc;
    out_ = pr::stack_forward(B_, H_, X_.data(), variant == "shared" ? shared_ : unshared_, buf_a_.data(), buf_b_.data(),
                             &fc);
    out["flops_counted"] = fc.flops;
  }

  void predict(const sp::Params& p, const std::string& variant, const sp::Measurement& m, const sp::Machine& machine,
               std::vector<sp::Verdict>& out) const override {
    Technique::predict(p, variant, m, machine, out);
    const auto& c = m.counters;
    const double B = p.i("B"), H = p.i("H"), L = p.i("L");
    auto exact = [&](const std::string& q, double predicted, double counted, const std::string& note) {
      out.push_back(sp::exact_verdict(info_.name, variant, p, q, "", predicted, counted, note));
    };
    if (c.count("flops_counted"))
      exact("FLOPs", 2 * B * H * H * L, c.at("flops_counted"), "2 B H^2 L with or without sharing");
    if (variant != "shared" || !c.count("weight_bytes_shared")) return;
    exact("weight bytes shared", 4 * H * H, c.at("weight_bytes_shared"), "4 H^2: one block");
    exact("weight bytes unshared", 4 * H * H * L, c.at("weight_bytes_unshared"), "4 H^2 L: one block per layer");
    exact("weight bytes unshared / shared", L, c.at("weight_bytes_unshared") / c.at("weight_bytes_shared"),
          "memory falls by L, compute does not");
  }

  void teardown() override {
    X_ = buf_a_ = buf_b_ = {}, W_.clear(), shared_.clear(), unshared_.clear(), out_ = nullptr;
  }

 private:
  static Kokkos::View<float*> upload(const std::vector<float>& h) {
    Kokkos::View<float*> d("W", h.size());
    Kokkos::deep_copy(d, Kokkos::View<const float*, Kokkos::HostSpace>(h.data(), h.size()));
    return d;
  }

  int B_ = 0, H_ = 0, L_ = 0;
  std::vector<float> hx_;
  std::vector<std::vector<float>> hw_;
  Kokkos::View<float*> X_, buf_a_, buf_b_;
  std::vector<Kokkos::View<float*>> W_;
  std::vector<const float*> shared_, unshared_;
  float* out_ = nullptr;
};

SP_REGISTER_TECHNIQUE(ParamSharing);

}  // namespace
