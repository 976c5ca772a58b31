// Mixed-precision training of a two-layer MLP (docs/precision.md "Mixed precision"):
// fp16 or bf16 storage with fp32 accumulation, fp32 master weights, static
// or dynamic loss scaling with GradScaler's defaults, skipped steps on
// inf/NaN. One run() = `steps` SGD iterations from the same initial state.
// check(): (c) the loss curve tracks a double-precision reference within a
// stated bound; (b) the scale sequence equals the reference state machine
// fed with the overflow flags the device observed.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <memory>

#include "kernels/nn/gemm_rate.hpp"
#include "kernels/precision/mlp.hpp"
#include "reference/precision/mlp_ref.hpp"
#include "reference/precision/scaler_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"
#include "suites/precision/mlp_problem.hpp"

namespace {

using namespace sp::precision;

struct Trace {
  std::vector<double> loss, scale;
  std::vector<bool> applied;
};

class AmpMlp : public sp::nn::GemmRateTechnique {
 public:
  AmpMlp() : GemmRateTechnique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "amp_mlp";
    i.family = "precision";
    i.headline = {"loss deviation from double reference"};
    i.summary = "MLP training: fp16/bf16 storage, fp32 master weights, loss scaling";
    auto set = [](const char* t, const char* scaling, int b, int d, int h, int steps, int interval) {
      return sp::Params{{"dtype", t},
                        {"scaling", scaling},
                        {"B", std::to_string(b)},
                        {"D", std::to_string(d)},
                        {"H", std::to_string(h)},
                        {"O", "8"},
                        {"steps", std::to_string(steps)},
                        {"lr", "0.05"},
                        {"interval", std::to_string(interval)}};
    };
    // Conformance: growth interval 1, so the scale doubles every clean step and
    // overflows in fp16 within 12 steps: growth, backoff and skipped steps are all checked.
    for (auto [t, sc] : {std::pair{"fp32", "none"}, {"fp16", "dynamic"}, {"fp16", "static"}, {"bf16", "none"}}) {
      i.param_sets.push_back({sp::Size::conformance, set(t, sc, 16, 12, 24, 12, 1)});
      i.param_sets.push_back({sp::Size::small, set(t, sc, 128, 128, 256, 30, 2000)});
      // A shortened growth interval (10) so that growth, overflow and backoff all show in 100 steps.
      if (std::string(sc) == "dynamic") i.param_sets.push_back({sp::Size::small, set(t, sc, 128, 128, 256, 100, 10)});
      i.param_sets.push_back({sp::Size::medium, set(t, sc, 256, 256, 512, 100, 2000)});
      i.param_sets.push_back({sp::Size::large, set(t, sc, 1024, 512, 2048, 100, 2000)});
    }
    i.variants = {sp::Variant::kernel("kokkos")};
    i.tol.roof_min = 0.0;  // small strided GEMMs: the roofline position is reported, not judged
    i.source = "docs/precision.md Mixed precision (Micikevicius et al. 2018; torch.amp.GradScaler defaults)";
    return i;
  }

  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    const auto& t = p.s("dtype");
    if (t != "fp32" && t != "fp16" && t != "bf16")
      throw sp::InputError("amp_mlp: unknown dtype '" + t + "' (fp32, fp16 or bf16)");
    const auto& s = p.s("scaling");
    if (s != "none" && s != "static" && s != "dynamic")
      throw sp::InputError("amp_mlp: unknown scaling '" + s + "' (none, static or dynamic)");
    const double lr = p.d("lr");
    if (!(lr > 0) || !std::isfinite(lr)) throw sp::InputError("amp_mlp: lr must be a finite number > 0");
  }

  sp::Counts counts(const sp::Params& p, int) const override {
    const double B = p.i("B"), D = p.i("D"), H = p.i("H"), O = p.i("O"), steps = p.i("steps");
    const double es = p.s("dtype") == "fp32" ? 4 : 2;
    sp::Counts c;
    // Forward 2 GEMMs, backward 3 (the input gradient of layer 1 is not needed): gemm_shapes().
    c.flops = 0;
    for (const auto& g : gemm_shapes(p)) c.flops += g.flops();
    // Per step: weights read (fwd, bwd) and written, gradients written and read, masters read+written.
    const double w = D * H + H * O;
    c.bytes_read = steps * (w * es * 2 + w * es + w * 4 + (B * D + B * H) * es * 2);
    c.bytes_written = steps * (w * es * 2 + w * 4 + B * H * es * 2);
    c.dtype = p.s("dtype");
    return c;
  }

  void setup(const sp::Params& p, int) override {
    p_ = p;
    gemm_at_.clear();
    prob_ = make_mlp_problem(p.i("B"), p.i("D"), p.i("H"), p.i("O"));
  }

  void run(const std::string&) override {
    const auto& t = p_.s("dtype");
    if (t == "fp32")
      trace_ = train<float>();
    else if (t == "fp16")
      trace_ = train<fp16_t>();
    else
      trace_ = train<bf16_t>();
  }

  sp::CheckResult check(const std::string&) override {
    // (c) loss tracking. Each forward path stores X, W1, H and W2 in S: four
    // roundings of relative size u_S each; the squared loss doubles the
    // relative perturbation of the prediction. Allowing a factor 8 for the
    // residual's cancellation and the drift accumulated over the steps gives
    // the declared bound |L_S(t) - L_ref(t)| <= 64 u_S L_ref(t).
    const double u = unit_roundoff();
    std::vector<double> w1(prob_.w1.begin(), prob_.w1.end()), w2(prob_.w2.begin(), prob_.w2.end());
    auto ref = sp::reference::mlp_train_ref(prob_.B, prob_.D, prob_.H, prob_.O, prob_.x, prob_.y, w1, w2, p_.d("lr"),
                                            trace_.applied);
    sp::Comparator cmp("loss per step within 64*u_S*L_ref (u_S of the storage type); scale sequence exact");
    for (size_t t = 0; t < ref.size(); ++t) cmp.add(trace_.loss[t], ref[t], 64 * u * ref[t]);
    // (b) scaler: the sequence of scales used equals the reference fed with the observed overflows.
    std::vector<bool> overflow;
    for (bool a : trace_.applied) overflow.push_back(!a);
    sp::CheckResult r = cmp.result();
    const auto cfg = scaler_config();
    // Static scaling is the same machine with neither growth nor backoff.
    auto tr =
        sp::reference::scaler_trace(overflow, cfg.init_scale, cfg.growth_factor, cfg.dynamic ? cfg.backoff_factor : 1.0,
                                    cfg.dynamic ? cfg.growth_interval : 1 << 30);
    long long mismatched = 0;
    for (size_t t = 0; t < overflow.size(); ++t) mismatched += tr.scale_used[t] != trace_.scale[t];
    r.checked += overflow.size();
    r.wrong += mismatched;
    if (mismatched) r.note = std::to_string(mismatched) + " scale(s) differ from the reference state machine";
    return r;
  }

  void report_counters(const std::string&, std::map<std::string, double>& out) override {
    if (gemm_at_.flops() == 0) {
      const auto& t = p_.s("dtype");
      if (t == "fp32")
        gemm_at_.prepare<float>(gemm_shapes(p_));
      else if (t == "fp16")
        gemm_at_.prepare<fp16_t>(gemm_shapes(p_));
      else
        gemm_at_.prepare<bf16_t>(gemm_shapes(p_));
    }
    double skipped = 0, dev = 0;
    for (bool a : trace_.applied) skipped += !a;
    std::vector<double> w1(prob_.w1.begin(), prob_.w1.end()), w2(prob_.w2.begin(), prob_.w2.end());
    auto ref = sp::reference::mlp_train_ref(prob_.B, prob_.D, prob_.H, prob_.O, prob_.x, prob_.y, w1, w2, p_.d("lr"),
                                            trace_.applied);
    for (size_t t = 0; t < ref.size(); ++t) dev = std::max(dev, std::fabs(trace_.loss[t] - ref[t]) / ref[t]);
    out["loss_first"] = trace_.loss.front();
    out["loss_last"] = trace_.loss.back();
    out["loss_rel_dev_max"] = dev;
    out["loss_bound_rel"] = 64 * unit_roundoff();
    out["skipped_steps"] = skipped;
    out["final_scale"] = trace_.scale.back();
  }

  void predict(const sp::Params& p, const std::string& variant, const sp::Measurement& m, const sp::Machine& machine,
               std::vector<sp::Verdict>& out) const override {
    Technique::predict(p, variant, m, machine, out);
    // Judged in fp32; with 16-bit storage the GEMM's own conversions set the
    // rate and the step adds the scaler's checks, so it is reported.
    sp::nn::append_gemm_rate_verdict(info_, p, variant, counts(p, m.ranks).flops, m, p.s("dtype") == "fp32", out);
    auto it = m.counters.find("loss_rel_dev_max");
    if (it == m.counters.end()) return;
    sp::Verdict v{info_.name, variant, p.label(), "loss deviation from double reference", "rel"};
    v.predicted = m.counters.at("loss_bound_rel");
    v.measured = it->second;
    v.ratio = v.measured / v.predicted;
    v.band_lo = 0, v.band_hi = 1;
    v.status = sp::pass_if(v.ratio <= 1);
    v.note = "max over steps; " + std::to_string(int(m.counters.at("skipped_steps"))) +
             " skipped step(s), final scale " + std::to_string(m.counters.at("final_scale"));
    out.push_back(v);
  }

 private:
  // The products of one call: per step H = X W1 (B x H x D), Yhat = H W2
  // (B x O x H), dW2 = H^T dY (H x O x B), dH = dY W2^T (B x H x O), dW1 = X^T dH (D x H x B).
  static std::vector<sp::nn::GemmShape> gemm_shapes(const sp::Params& p) {
    const int B = int(p.i("B")), D = int(p.i("D")), H = int(p.i("H")), O = int(p.i("O"));
    const double st = double(p.i("steps"));
    return {{B, H, D, st}, {B, O, H, st}, {H, O, B, st}, {B, H, O, st}, {D, H, B, st}};
  }
  double unit_roundoff() const {
    const auto& t = p_.s("dtype");
    return t == "fp32"   ? StorageInfo<float>::unit_roundoff
           : t == "fp16" ? StorageInfo<fp16_t>::unit_roundoff
                         : StorageInfo<bf16_t>::unit_roundoff;
  }
  ScalerConfig scaler_config() const {
    ScalerConfig c;
    const auto& s = p_.s("scaling");
    c.dynamic = s == "dynamic";
    c.growth_interval = static_cast<int>(p_.i("interval"));
    if (s == "none") c.init_scale = 1;
    if (s == "static") c.init_scale = 1024;  // a typical fixed scale (Micikevicius et al. used 8 to 32K)
    return c;
  }
  template <class S>
  Trace train() {
    Mlp<S> net({prob_.B, prob_.D, prob_.H, prob_.O}, prob_.x, prob_.y, prob_.w1, prob_.w2);
    GradScaler scaler(scaler_config());
    Trace tr;
    const double lr = p_.d("lr");
    for (int64_t s = 0; s < p_.i("steps"); ++s) {
      tr.scale.push_back(scaler.scale());
      bool applied = false;
      tr.loss.push_back(net.train_step(lr, scaler, &applied));
      tr.applied.push_back(applied);
    }
    return tr;
  }

  sp::Params p_;
  MlpProblem prob_;
  Trace trace_;
};

SP_REGISTER_TECHNIQUE(AmpMlp);

}  // namespace
