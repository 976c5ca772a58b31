// Peak FLOP/s in fp32 and fp64: the compute roof of the roofline
// (Williams et al. 2009; measured, not quoted, as docs/roofline.md asks).
#include <Kokkos_Core.hpp>

#include "kernels/roofline/fma_peak.hpp"
#include "reference/roofline/fma_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"

namespace {

class FmaPeak : public sp::Technique {
 public:
  FmaPeak() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "fma_peak";
    i.family = "roofline";
    i.summary = "peak FLOP/s from independent FMA chains";
    for (const char* t : {"fp32", "fp64"}) {
      i.param_sets.push_back({sp::Size::conformance, {{"dtype", t}, {"items", "37"}, {"iters", "300"}}});
      i.param_sets.push_back({sp::Size::small, {{"dtype", t}, {"items", "256"}, {"iters", "2000"}}});
      i.param_sets.push_back({sp::Size::medium, {{"dtype", t}, {"items", "2048"}, {"iters", "20000"}}});
      i.param_sets.push_back({sp::Size::large, {{"dtype", t}, {"items", "8192"}, {"iters", "40000"}}});
    }
    i.variants = {sp::Variant::kernel("kokkos")};
    i.roof_probe = "peak";
    i.source = "docs/roofline.md Roofline; Empirical Roofline Toolkit";
    return i;
  }

  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    const auto& t = p.s("dtype");
    if (t != "fp32" && t != "fp64") throw sp::InputError("fma_peak: unknown dtype '" + t + "' (fp32 or fp64)");
  }

  sp::Counts counts(const sp::Params& p, int) const override {
    sp::Counts c;
    const bool f32 = p.s("dtype") == "fp32";
    const int lanes = f32 ? sp::kernels::FmaLanes<float>::value : sp::kernels::FmaLanes<double>::value;
    c.flops = 2.0 * lanes * static_cast<double>(p.i("iters")) * static_cast<double>(p.i("items"));
    c.bytes_written = static_cast<double>(p.i("items")) * (f32 ? 4 : 8);
    c.dtype = p.s("dtype");
    return c;
  }

  void setup(const sp::Params& p, int) override {
    f32_ = p.s("dtype") == "fp32";
    items_ = p.i("items");
    iters_ = p.i("iters");
    if (f32_)
      out32_ = Kokkos::View<float*>("out", items_);
    else
      out64_ = Kokkos::View<double*>("out", items_);
  }

  void run(const std::string&) override {
    if (f32_)
      sp::kernels::fma_chain<float>(out32_, items_, iters_, a_, b_);
    else
      sp::kernels::fma_chain<double>(out64_, items_, iters_, a_, b_);
  }

  sp::CheckResult check(const std::string&) override { return f32_ ? check_t<float>(out32_) : check_t<double>(out64_); }

 private:
  template <class T>
  sp::CheckResult check_t(Kokkos::View<T*> out) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    constexpr int L = sp::kernels::FmaLanes<T>::value;
    const double u = sp::unit_roundoff<T>();
    // With |a| < 1 an error made at step k shrinks afterwards, so after n
    // steps |err| <= n * 2u * max|x| per lane (2 roundings if not fused), and
    // the final sum of L lanes adds gamma_L * sum|x|.
    sp::Comparator cmp("2*iters*u*max|x|*L + gamma_L*sum|x|");
    for (int64_t w = 0; w < items_; ++w) {
      long double mx = 0;
      const long double want = sp::reference::fma_chain_item(w, L, iters_, T(a_), T(b_), &mx);
      const double bound = 2.0 * iters_ * u * double(mx) * L + sp::gamma_n(L, u) * L * double(mx);
      cmp.add(h(w), double(want), bound);
    }
    return cmp.result();
  }
  bool f32_ = true;
  int64_t items_ = 0, iters_ = 0;
  // a < 1 keeps the chains bounded (fixed point b / (1 - a) = 1).
  double a_ = 0.999, b_ = 0.001;
  Kokkos::View<float*> out32_;
  Kokkos::View<double*> out64_;
};

SP_REGISTER_TECHNIQUE(FmaPeak);

}  // namespace
