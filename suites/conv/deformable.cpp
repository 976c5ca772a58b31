// Deformable convolution v1 and v2 (docs/compression.md), forward: an
// offset convolution (2 dg kh kw channels) predicts per-position offsets,
// v2's mask convolution (dg kh kw channels, sigmoid) per-sample masks, and
// the main convolution samples its input there (kernels/conv/conv_deformable.hpp).
// Companion variants on the same shape without deformation: the standard
// conv as im2col + GEMM (what the deformable kernel extends), the direct
// conv, and oneDNN (vendor baseline).
// Offsets "learned" (random offset conv), "zero" (zero-initialised offset
// and mask convs: samples exactly on pixel centres, output bitwise equal to
// the im2col conv, times sigmoid(0) = 1/2 for v2) or "outside" (constant
// offsets landing outside the image and across its border).
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "kernels/conv/conv_deformable.hpp"
#include "kernels/conv/conv_direct.hpp"
#include "kernels/conv/conv_im2col.hpp"
#include "reference/conv/conv_ref.hpp"
#include "reference/conv/deform_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"
#ifdef SP_HAVE_ONEDNN
#include "suites/conv/onednn_conv.hpp"
#endif

namespace {

namespace cv = sp::conv;
using F = float;
constexpr double kU = 0x1p-24;

struct Shape {
  int N, C, O, H, W, k, stride, dg;
  bool v2;
  cv::ConvSpec main, offset, mask;
  int OH, OW;
};

Shape shape_of(const sp::Params& p) {
  Shape s{int(p.i("N")),
          int(p.i("C")),
          int(p.i("O")),
          int(p.i("H")),
          int(p.i("W")),
          int(p.i("k")),
          int(p.i("stride")),
          int(p.i("dg")),
          p.s("version") == "v2",
          {},
          {},
          {},
          0,
          0};
  const int pad = (s.k - 1) / 2, taps = s.dg * s.k * s.k;
  s.main = {s.C, s.O, s.k, s.k, s.stride, pad, pad, 1, false, cv::Act::none};
  s.offset = {s.C, 2 * taps, s.k, s.k, s.stride, pad, pad, 1, true, cv::Act::none};
  s.mask = {s.C, taps, s.k, s.k, s.stride, pad, pad, 1, true, cv::Act::sigmoid};
  s.OH = s.main.out_h(s.H), s.OW = s.main.out_w(s.W);
  return s;
}

// Closed forms: weights and biases of the three convolutions.
double params_closed(const Shape& s) {
  const double kk = double(s.k) * s.k, taps = s.dg * kk;
  return s.O * s.C * kk + 2 * taps * (s.C * kk + 1) + (s.v2 ? taps * (s.C * kk + 1) : 0);
}
// FLOPs: 2 per multiply-add of the convolutions, one per bias add, and
// kSampleFlops (+1 with a mask) per sample; sigmoid evaluations not counted.
double flops_closed(const Shape& s) {
  const double out = double(s.N) * s.OH * s.OW, kk = double(s.k) * s.k, taps = s.dg * kk;
  const double convs = 2 * out * kk * s.C * (s.O + 2 * taps + (s.v2 ? taps : 0)) + out * (2 * taps + (s.v2 ? taps : 0));
  return convs + out * s.C * kk * (cv::kSampleFlops + (s.v2 ? 1 : 0));
}
// The standard convolution of the same shape.
double flops_standard(const Shape& s) { return 2.0 * s.N * s.OH * s.OW * s.O * s.C * s.k * s.k; }

// Memory access cost of each layer of the block (Ma et al. 2018: the bytes
// a layer must move, its inputs, weights and outputs), with its FLOPs.
struct Component {
  const char* name;
  double flops, bytes;
};
std::vector<Component> components(const Shape& s) {
  const double out = double(s.N) * s.OH * s.OW, kk = double(s.k) * s.k, taps = s.dg * kk;
  const double x = double(s.N) * s.C * s.H * s.W, col = out * s.C * kk;
  std::vector<Component> c;
  c.push_back(
      {"offset conv", out * 2 * taps * (2 * s.C * kk + 1), 4 * (x + 2 * taps * (s.C * kk + 1) + out * 2 * taps)});
  if (s.v2) c.push_back({"mask conv", out * taps * (2 * s.C * kk + 1), 4 * (x + taps * (s.C * kk + 1) + out * taps)});
  c.push_back({"sampling", col * (cv::kSampleFlops + (s.v2 ? 1 : 0)), 4 * (x + out * taps * (s.v2 ? 3 : 2) + col)});
  c.push_back({"GEMM", 2 * col * s.O, 4 * (col + s.O * s.C * kk + out * s.O)});
  return c;
}

class ConvDeformable : public sp::Technique {
 public:
  ConvDeformable() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "conv_deformable";
    i.family = "conv";
    i.summary = "deformable conv v1/v2 (offset conv, bilinear sampling, mask) vs standard im2col, direct and oneDNN";
    auto set = [](int n, int c, int o, int hw, int k, int stride, int dg, const char* v, const char* off) {
      return sp::Params{{"N", std::to_string(n)},
                        {"C", std::to_string(c)},
                        {"O", std::to_string(o)},
                        {"H", std::to_string(hw)},
                        {"W", std::to_string(hw)},
                        {"k", std::to_string(k)},
                        {"stride", std::to_string(stride)},
                        {"dg", std::to_string(dg)},
                        {"version", v},
                        {"offsets", off},
                        {"offset_shape", "auto"}};
    };
    for (const char* v : {"v1", "v2"})
      for (const char* off : {"learned", "zero", "outside"}) {
        i.param_sets.push_back({sp::Size::conformance, set(2, 4, 5, 7, 3, 1, 2, v, off)});
        i.param_sets.push_back({sp::Size::conformance, set(1, 3, 2, 9, 3, 2, 1, v, off)});
      }
    i.param_sets.push_back({sp::Size::conformance, set(1, 2, 3, 6, 1, 1, 1, "v2", "learned")});
    for (const char* v : {"v1", "v2"}) {
      i.param_sets.push_back({sp::Size::small, set(2, 32, 32, 28, 3, 1, 1, v, "learned")});
      i.param_sets.push_back({sp::Size::medium, set(8, 64, 64, 56, 3, 1, 1, v, "learned")});
      i.param_sets.push_back({sp::Size::large, set(16, 128, 128, 56, 3, 1, 1, v, "learned")});
    }
    i.variants = {sp::Variant::kernel("deform"), sp::Variant::kernel("im2col"), sp::Variant::kernel("direct")};
#ifdef SP_HAVE_ONEDNN
    i.variants.push_back(sp::Variant::vendor("onednn", "onednn", sp::MemoryNeed::host));
    i.baseline = "onednn";
#endif
    i.tol.roof_min = 0.0;  // the sampling is a gather: reported against the roof, not judged
    i.headline = {"parameters", "FLOPs", sp::kHeadlineVsBaseline};
    i.source = "Dai et al. 2017; Zhu et al. 2019; MODELS.md Roofline";
    return i;
  }
  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    if (p.s("version") != "v1" && p.s("version") != "v2")
      throw sp::InputError("conv_deformable: unknown version '" + p.s("version") + "' (v1 or v2)");
    const auto& o = p.s("offsets");
    if (o != "learned" && o != "zero" && o != "outside")
      throw sp::InputError("conv_deformable: unknown offsets '" + o + "' (learned, zero or outside)");
    for (const char* key : {"N", "C", "O", "H", "W", "k", "stride", "dg"})  // before any int conversion
      if (p.i(key) > (int64_t(1) << 24))
        throw sp::InputError(std::string("conv_deformable: ") + key + " above 2^24 is not supported");
    const Shape s = shape_of(p);
    if (s.k % 2 == 0) throw sp::InputError("conv_deformable: k must be odd (same padding)");
    if (s.C % s.dg != 0) throw sp::InputError("conv_deformable: dg=" + p.s("dg") + " does not divide C=" + p.s("C"));
    cv::validate(s.main, s.H, s.W, "conv_deformable");
    const auto& os = p.s("offset_shape");
    if (os != "auto") {
      int64_t e[4];
      char tail;
      if (std::sscanf(os.c_str(), "%ldx%ldx%ldx%ld%c", &e[0], &e[1], &e[2], &e[3], &tail) != 4)
        throw sp::InputError("conv_deformable: offset_shape must be auto or NxCxHxW (got '" + os + "')");
      const std::string bad = cv::deform_offsets_error(s.main, s.dg, s.N, s.H, s.W, e);
      if (!bad.empty()) throw sp::InputError("conv_deformable: " + bad);
    }
    const double col = double(s.C) * s.k * s.k * s.OH * s.OW, act = double(s.N) * std::max(s.C, s.O) * s.H * s.W;
    if (col > double(int64_t(1) << 31) || act > double(int64_t(1) << 31))
      throw sp::InputError("conv_deformable: tensors above 2^31 elements are not supported");
  }

  // The deformable variant: offset (and mask) convs, sampling into the
  // column matrix, GEMM; bytes: input, weights, offsets and masks written
  // and read, the column matrix written and read, the output.
  // Layer by layer, as the conv family counts a block: each layer reads its
  // inputs and weights and writes its output once, so the input is read by
  // every consumer (offset conv, mask conv, sampling).
  sp::Counts counts(const sp::Params& p, int) const override {
    const Shape s = shape_of(p);
    const double out = double(s.N) * s.OH * s.OW, taps = s.dg * s.k * s.k;
    const double col = double(s.C) * s.k * s.k * s.OH * s.OW * s.N, maps = out * taps * (s.v2 ? 3 : 2);
    sp::Counts c;
    c.flops = flops_closed(s);
    c.bytes_read = 4 * ((s.v2 ? 3 : 2) * double(s.N) * s.C * s.H * s.W + params_closed(s) + maps + col);
    c.bytes_written = 4 * (maps + col + out * s.O);
    c.dtype = "fp32";
    return c;
  }

  void setup(const sp::Params& p, int) override {
    s_ = shape_of(p);
    params_ = p;
    const std::string mode = p.s("offsets");
    uint64_t st = 2017;
    auto uni = [&st] {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      return float(double(st >> 11) * 0x1p-53 * 2 - 1);
    };
    hx_.resize(size_t(s_.N) * s_.C * s_.H * s_.W);
    for (auto& v : hx_) v = uni();
    const float kk = float(s_.k * s_.k), a = 1.0f / std::sqrt(s_.C * kk);
    hw_.resize(size_t(s_.O) * s_.C * s_.k * s_.k);
    for (auto& v : hw_) v = a * uni();
    const int taps = s_.dg * s_.k * s_.k;
    how_.assign(size_t(2 * taps) * s_.C * s_.k * s_.k, 0.0f), hob_.assign(2 * taps, 0.0f);
    hmw_.assign(size_t(taps) * s_.C * s_.k * s_.k, 0.0f), hmb_.assign(taps, 0.0f);
    if (mode == "learned") {  // offsets of about one pixel either way, masks around 1/2
      for (auto& v : how_) v = 3 * a * uni();
      for (auto& v : hob_) v = 0.5f * uni();
      for (auto& v : hmw_) v = 3 * a * uni();
      for (auto& v : hmb_) v = uni();
    } else if (mode == "outside") {  // zero weights: the offsets are the biases, exactly
      const float dy[3] = {float(s_.H) + 1.5f, -0.75f, 0.5f}, dx[3] = {-(float(s_.W) + 2.25f), 0.25f, -1.5f};
      for (int t = 0; t < taps; ++t) hob_[2 * t] = dy[t % 3], hob_[2 * t + 1] = dx[(t / 3) % 3];
    }
    x_ = upload4(hx_, s_.N, s_.C, s_.H, s_.W);
    w_ = upload4(hw_, s_.O, s_.C, s_.k, s_.k);
    ow_ = upload4(how_, 2 * taps, s_.C, s_.k, s_.k), ob_ = upload1(hob_);
    mw_ = upload4(hmw_, taps, s_.C, s_.k, s_.k), mb_ = upload1(hmb_);
    off_ = cv::Tensor<F>("offsets", s_.N, 2 * taps, s_.OH, s_.OW);
    mask_ = cv::Tensor<F>("masks", s_.v2 ? s_.N : 0, taps, s_.OH, s_.OW);
    y_ = cv::Tensor<F>("y", s_.N, s_.O, s_.OH, s_.OW);
    col_ = Kokkos::View<F**, Kokkos::LayoutRight>("col", size_t(s_.C) * s_.k * s_.k, size_t(s_.OH) * s_.OW);
#ifdef SP_HAVE_ONEDNN
    if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible)
      onednn_ = std::make_unique<cv::OnednnConv>(s_.main, s_.N, s_.H, s_.W, cv::OnednnLayout::plain, x_.data(),
                                                 w_.data(), nullptr, y_.data());
#endif
  }

  // Every variant runs from one setup(): the baseline is timed in turn with
  // the main variant inside its case.
  std::vector<sp::Probe> probes(const std::string& variant) const override { return paired_with_baseline(variant); }

  void run(const std::string& variant) override {
    if (variant == "deform") {
      cv::conv2d_direct<F>(s_.offset, x_, ow_, ob_, off_);
      if (s_.v2) cv::conv2d_direct<F>(s_.mask, x_, mw_, mb_, mask_);
      cv::conv2d_deformable<F>(s_.main, s_.dg, x_, off_, mask_, s_.v2, w_, y_, col_);
    } else if (variant == "im2col") {
      cv::conv2d_im2col<F>(s_.main, x_, w_, cv::CVec<F>(), y_, col_);
    } else if (variant == "direct") {
      cv::conv2d_direct<F>(s_.main, x_, w_, cv::CVec<F>(), y_);
    } else {
#ifdef SP_HAVE_ONEDNN
      onednn_->run();
#endif
    }
  }

  sp::CheckResult check(const std::string& variant) override {
    sp::reference::RefTensor x;
    x.resize(s_.N, s_.C, s_.H, s_.W);
    for (size_t e = 0; e < hx_.size(); ++e) x.v[e] = hx_[e];
    const auto y = host(y_);
    if (variant != "deform") {
      const auto want = sp::reference::conv_ref<F>(s_.main, x, hw_, {}, kU);
      return compare("standard conv: gamma_L sum|w||x| (conv_ref.hpp)", y, want);
    }
    // The offset (and mask) convolutions against conv_ref, then the
    // deformable sampling and product given the offsets and masks they made.
    const auto off = host(off_), mask = s_.v2 ? host(mask_) : std::vector<F>();
    sp::CheckResult r =
        compare("offset conv: conv_ref bound", off, sp::reference::conv_ref<F>(s_.offset, x, how_, hob_, kU));
    if (s_.v2)
      r.merge(
          compare("mask conv + sigmoid: conv_ref bound", mask, sp::reference::conv_ref<F>(s_.mask, x, hmw_, hmb_, kU)));
    r.merge(compare("deformable: gamma_L sum|w|(m S + e_t) + sum|w| e_t (deform_ref.hpp)", y,
                    sp::reference::deform_conv_ref(s_.main, s_.dg, s_.N, s_.H, s_.W, hx_, off, mask, hw_)));
    if (params_.s("offsets") == "zero") {
      // On pixel centres the column matrix is im2col's: bitwise the same output (v2: times 1/2, exact).
      cv::Tensor<F> std_y("y_im2col", s_.N, s_.O, s_.OH, s_.OW);
      Kokkos::View<F**, Kokkos::LayoutRight> col("col", col_.extent(0), col_.extent(1));
      cv::conv2d_im2col<F>(s_.main, x_, w_, cv::CVec<F>(), std_y, col);
      const auto ys = host(std_y);
      sp::Comparator bit("zero offsets: == im2col conv bitwise (v2: x 1/2)");
      for (size_t e = 0; e < y.size(); ++e) bit.add(y[e], s_.v2 ? 0.5 * ys[e] : ys[e], 0);
      r.merge(bit.result());
    }
    return r;
  }

  void report_counters(const std::string& variant, std::map<std::string, double>& out) override {
    // Parameters from the built weight and bias views (the standard
    // variants hold only the main conv's); FLOPs from the layers that ran
    // (2 per multiply-add, 1 per bias add) and the samples written.
    if (variant != "deform") {
      out["params"] = double(w_.span());
      return;
    }
    double params = double(w_.span() + ow_.span() + ob_.span());
    if (s_.v2) params += double(mw_.span() + mb_.span());
    out["params"] = params;
    auto conv_flops = [](const cv::ConvSpec& c, const cv::Tensor<F>& y) {
      const double outs = double(y.span());
      return outs * (2.0 * c.macs_per_output() + (c.bias ? 1 : 0));
    };
    double flops = conv_flops(s_.offset, off_) + conv_flops(s_.main, y_);
    if (s_.v2) flops += conv_flops(s_.mask, mask_);
    flops += double(col_.span()) * s_.N * (cv::kSampleFlops + (s_.v2 ? 1 : 0));
    out["flops_counted"] = flops;
  }

  void predict(const sp::Params& p, const std::string& variant, const sp::Measurement& m, const sp::Machine& machine,
               std::vector<sp::Verdict>& out) const override {
    Technique::predict(p, variant, m, machine, out);
    const Shape s = shape_of(p);
    const auto& c = m.counters;
    auto exact = [&](const std::string& q, double predicted, double counted, const std::string& note) {
      out.push_back(sp::exact_verdict(info_.name, variant, p, q, "", predicted, counted, note));
    };
    if (variant != "deform" && c.count("params"))
      exact("parameters", double(s.O) * s.C * s.k * s.k, c.at("params"), "O C k^2: the standard conv's weights");
    if (variant == "deform" && c.count("params")) {
      exact("parameters", params_closed(s), c.at("params"),
            "O C k^2 + 2 dg k^2 (C k^2 + 1) [+ dg k^2 (C k^2 + 1) for v2]");
      char buf[160];
      std::snprintf(buf, sizeof buf, "%.3fx the standard conv's %.4g FLOPs", flops_closed(s) / flops_standard(s),
                    flops_standard(s));
      exact("FLOPs", flops_closed(s), c.at("flops_counted"), buf);
    }
    if (variant == "deform") {
      // Memory access cost: the layers' MAC summed against the bytes the
      // roofline uses (counts()), exactly; then each layer's intensity
      // against the machine balance P / BW: below it the layer is memory-bound.
      double mac = 0;
      std::string bound;
      const double balance = machine.bandwidth > 0 ? machine.peak_for("fp32") / machine.bandwidth : 0;
      for (const auto& comp : components(s)) {
        mac += comp.bytes;
        if (balance <= 0) continue;
        sp::Verdict v{info_.name, variant, p.label(), std::string("intensity / machine balance, ") + comp.name, "x"};
        v.predicted = comp.flops / comp.bytes, v.measured = balance, v.ratio = v.predicted / balance;
        v.band_lo = 0, v.band_hi = INFINITY, v.status = sp::Status::info;
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s: %.3g FLOP/B vs balance %.3g FLOP/B: %s; MAC %.4g B", comp.name, v.predicted,
                      balance, v.ratio < 1 ? "memory-bound" : "compute-bound", comp.bytes);
        v.note = buf;
        out.push_back(v);
        if (v.ratio < 1) bound += std::string(bound.empty() ? "" : ", ") + comp.name;
      }
      const sp::Counts cn = counts(p, 1);
      exact("memory access cost", mac, cn.bytes(),
            "sum over layers of inputs + weights + outputs vs the roofline bytes; memory-bound: " +
                (balance > 0 ? (bound.empty() ? std::string("none") : bound) : std::string("no machine balance")));
    }
    if (variant != "deform" && m.seconds > 0) {
      // Roofline position of the standard conv of the same shape (its own counts).
      const double bytes =
          4 * (double(s.N) * s.C * s.H * s.W + double(s.O) * s.C * s.k * s.k + double(s.N) * s.O * s.OH * s.OW);
      const double peak = machine.peak_for("fp32"),
                   t_roof = std::max(peak > 0 ? flops_standard(s) / peak : 0.0,
                                     machine.bandwidth > 0 ? bytes / machine.bandwidth : 0.0);
      sp::Verdict v{info_.name, variant, p.label(), "standard conv roofline position", "fraction"};
      v.predicted = t_roof, v.measured = m.seconds, v.ratio = t_roof > 0 ? t_roof / m.seconds : 0;
      v.band_lo = 0, v.band_hi = INFINITY, v.status = sp::Status::info;
      char buf[160];
      std::snprintf(buf, sizeof buf, "AI %.3g FLOP/B; %.1f%% of the attainable rate", flops_standard(s) / bytes,
                    100 * v.ratio);
      v.note = buf;
      out.push_back(v);
    }
  }

  void teardown() override {
    x_ = w_ = ow_ = mw_ = off_ = mask_ = y_ = {};
    ob_ = mb_ = {};
    col_ = {};
#ifdef SP_HAVE_ONEDNN
    onednn_.reset();
#endif
  }

 private:
  static cv::Tensor<F> upload4(const std::vector<F>& h, int a, int b, int c, int d) {
    cv::Tensor<F> t("t", a, b, c, d);
    Kokkos::deep_copy(t, Kokkos::View<const F****, Kokkos::LayoutRight, Kokkos::HostSpace>(h.data(), a, b, c, d));
    return t;
  }
  static cv::Vec<F> upload1(const std::vector<F>& h) {
    cv::Vec<F> v("b", h.size());
    Kokkos::deep_copy(v, Kokkos::View<const F*, Kokkos::HostSpace>(h.data(), h.size()));
    return v;
  }
  static std::vector<F> host(const cv::Tensor<F>& t) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t);
    return std::vector<F>(h.data(), h.data() + h.size());
  }
  static sp::CheckResult compare(const std::string& rule, const std::vector<F>& got,
                                 const sp::reference::RefTensor& want) {
    sp::Comparator c(rule);
    for (size_t e = 0; e < got.size(); ++e) c.add(got[e], double(want.v[e]), want.err[e]);
    return c.result();
  }

  Shape s_{};
  sp::Params params_;
  std::vector<F> hx_, hw_, how_, hob_, hmw_, hmb_;
  cv::Tensor<F> x_, w_, ow_, mw_, off_, mask_, y_;
  cv::Vec<F> ob_, mb_;
  Kokkos::View<F**, Kokkos::LayoutRight> col_;
#ifdef SP_HAVE_ONEDNN
  std::unique_ptr<cv::OnednnConv> onednn_;
#endif
};

SP_REGISTER_TECHNIQUE(ConvDeformable);

}  // namespace
