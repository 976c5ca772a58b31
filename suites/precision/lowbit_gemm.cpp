// Weights below 8 bits (docs/compression.md): grouped uniform (int4 packed
// two per byte, also 2 and 8 bits) and log2 weights against int8
// activations, and XNOR-Net binary weights and activations. Variants run in
// the same case: the low-bit kernel, the int8 per-channel GEMM of int8_gemm,
// the project's fp32 GEMM and OpenBLAS sgemm (vendor baseline).
// Checked per element against bounds derived per scheme (lowbit_check.hpp);
// predicted and counted: bytes of the weights (exact); reported: the
// error-vs-bits curve of every scheme on int8_gemm's outlier matrix.
#include <Kokkos_Core.hpp>
#include <cmath>

#include "kernels/gemm/gemm_tiled.hpp"
#include "kernels/precision/gemm_lowp.hpp"
#include "kernels/precision/lowbit.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "scaleproof/registry.hpp"
#include "suites/precision/lowbit_check.hpp"
#ifdef SP_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

namespace pr = sp::precision;
namespace lc = sp::precision::lowbit_check;
using sp::reference::LowbitRef;
template <class T>
using Mat = Kokkos::View<T**, Kokkos::LayoutRight>;

constexpr int kOutlierEvery = 32;        // int8_gemm's outlier matrix: every 32nd row of A ...
constexpr float kOutlierScale = 100.0f;  // ... 100x larger than the rest

// The error-vs-bits curve: (scheme, bits) pairs measured on the outlier matrix.
struct CurvePoint {
  LowbitRef scheme;
  int bits;
  const char* name;
};
const CurvePoint kCurve[] = {{LowbitRef::binary, 1, "binary"},   {LowbitRef::uniform, 2, "uniform"},
                             {LowbitRef::uniform, 4, "uniform"}, {LowbitRef::uniform, 8, "uniform"},
                             {LowbitRef::log2, 2, "log2"},       {LowbitRef::log2, 4, "log2"},
                             {LowbitRef::log2, 8, "log2"}};

std::string curve_key(const CurvePoint& c) { return "rel_err_" + std::string(c.name) + "_b" + std::to_string(c.bits); }

// Model of the curve for data uniform on [-a, a] with group max ~ a
// (docs/compression.md): relative RMS error sqrt(3 E[(t - Q(t))^2]), t ~ U[0, 1].
double curve_model(const CurvePoint& c) {
  const int L = (1 << (c.bits - 1)) - 1;
  if (c.scheme == LowbitRef::binary) return 0.5;       // E(|t| - 1/2)^2 = 1/12
  if (c.scheme == LowbitRef::uniform) return 0.5 / L;  // step 1/L: (1/L)^2/12
  // log2: t in [2^-(m-1) sqrt(1/2), 2^-(m-2) sqrt(1/2)) maps to 2^-(m-1); below the last midpoint to 0.
  auto cube = [](double lo, double hi, double v) { return (std::pow(hi - v, 3) - std::pow(lo - v, 3)) / 3; };
  double e = 0;
  for (int m = 1; m <= L; ++m) {
    const double lvl = std::ldexp(1.0, -(m - 1)), lo = lvl * std::sqrt(0.5), hi = m == 1 ? 1.0 : 2 * lo;
    e += cube(lo, hi, lvl);
  }
  e += cube(0, std::ldexp(std::sqrt(0.5), -(L - 1)), 0);
  return std::sqrt(3 * e);
}

LowbitRef scheme_of(const sp::Params& p) {
  const auto& s = p.s("scheme");
  if (s == "uniform") return LowbitRef::uniform;
  if (s == "log2") return LowbitRef::log2;
  if (s == "binary") return LowbitRef::binary;
  throw sp::InputError("lowbit_gemm: unknown scheme '" + s + "' (uniform, log2 or binary)");
}

// Bytes of W as built: packed codes and one fp32 scale per group, or sign
// words and one alpha per channel.
double weight_bytes(const sp::Params& p) {
  const double N = p.i("N"), K = p.i("K"), bits = p.i("bits"), g = p.i("group");
  if (scheme_of(p) == LowbitRef::binary) return N * std::ceil(K / 64) * 8 + N * 4;
  return N * K * bits / 8 + N * (K / g) * 4;
}

class LowbitGemm : public sp::Technique {
 public:
  LowbitGemm() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "lowbit_gemm";
    i.family = "precision";
    i.summary = "int4/int2 grouped, log2 and XNOR binary weights: packed GEMM vs int8, fp32 and OpenBLAS";
    auto set = [](int m, int n, int k, const char* sc, int bits, int g, int outliers) {
      return sp::Params{{"M", std::to_string(m)},
                        {"N", std::to_string(n)},
                        {"K", std::to_string(k)},
                        {"scheme", sc},
                        {"bits", std::to_string(bits)},
                        {"group", std::to_string(g)},
                        {"outliers", std::to_string(outliers)}};
    };
    for (auto [sc, bits] : {std::pair{"uniform", 2}, {"uniform", 4}, {"uniform", 8}, {"log2", 2}, {"log2", 4}}) {
      i.param_sets.push_back({sp::Size::conformance, set(1, 1, 8, sc, bits, 8, 0)});
      i.param_sets.push_back({sp::Size::conformance, set(33, 17, 64, sc, bits, 16, 0)});
      i.param_sets.push_back({sp::Size::conformance, set(64, 9, 128, sc, bits, 32, 1)});
    }
    i.param_sets.push_back({sp::Size::conformance, set(1, 1, 8, "binary", 1, 8, 0)});
    i.param_sets.push_back({sp::Size::conformance, set(33, 17, 130, "binary", 1, 130, 0)});  // a partial sign word
    i.param_sets.push_back({sp::Size::conformance, set(64, 9, 128, "binary", 1, 128, 1)});
    for (auto [size, n] : {std::pair{sp::Size::small, 256}, {sp::Size::medium, 1024}, {sp::Size::large, 2048}}) {
      i.param_sets.push_back({size, set(n, n, n, "uniform", 4, 128, 1)});
      i.param_sets.push_back({size, set(n, n, n, "uniform", 2, 128, 1)});
      i.param_sets.push_back({size, set(n, n, n, "log2", 4, 128, 1)});
      i.param_sets.push_back({size, set(n, n, n, "binary", 1, n, 1)});
    }
    i.param_rules = {{"outliers", 0, 1}, {"bits", 1, 8}};
    i.variants = {sp::Variant::kernel("lowbit"), sp::Variant::kernel("int8"), sp::Variant::kernel("fp32")};
#ifdef SP_HAVE_OPENBLAS
    i.variants.push_back(sp::Variant::vendor("openblas", "openblas", sp::MemoryNeed::host));
    i.baseline = "openblas";
#endif
    i.tol.roof_min = 0.0;  // no low-bit integer roof is probed; position reported against fp32's
    i.headline = {"weight bytes", sp::kHeadlineVsBaseline};
    i.source = "MODELS.md Quantization; Jacob et al. 2018; Rastegari et al. 2016; Miyashita et al. 2016";
    return i;
  }
  void validate(const sp::Params& p, int nranks) const override {
    sp::Params q = p;  // outliers is a 0/1 switch: the base rule (integers >= 1) would refuse 0
    q.set("outliers", "1");
    Technique::validate(q, nranks);
    if (p.s("outliers") != "0" && p.s("outliers") != "1") throw sp::InputError("lowbit_gemm: outliers must be 0 or 1");
    const auto scheme = scheme_of(p);
    const int64_t bits = p.i("bits"), g = p.i("group"), K = p.i("K");
    if (p.i("M") * K > (int64_t(1) << 30) || K * p.i("N") > (int64_t(1) << 30))
      throw sp::InputError("lowbit_gemm: matrices above 2^30 elements are not supported");
    if (bits != 1 && bits != 2 && bits != 4 && bits != 8)
      throw sp::InputError("lowbit_gemm: bits must be 1, 2, 4 or 8 (got " + p.s("bits") + ")");
    if (K % g != 0) throw sp::InputError("lowbit_gemm: group " + p.s("group") + " does not divide K=" + p.s("K"));
    if (scheme == LowbitRef::binary && bits != 1)
      throw sp::InputError("lowbit_gemm: scheme binary is 1 bit (got bits=" + p.s("bits") + ")");
    if (scheme != LowbitRef::binary && bits == 1)
      throw sp::InputError("lowbit_gemm: 1 bit is scheme binary (got scheme " + p.s("scheme") + ")");
    if (scheme == LowbitRef::log2 && bits == 8)
      throw sp::InputError("lowbit_gemm: log2 weights are 2 or 4 bits (8-bit codes would span 2^126)");
    if (scheme == LowbitRef::binary && g != K)
      throw sp::InputError("lowbit_gemm: binary scales whole channels: group must equal K");
    if (scheme != LowbitRef::binary && g * bits % 8 != 0)
      throw sp::InputError("lowbit_gemm: a group of " + p.s("group") + " " + p.s("bits") +
                           "-bit codes does not fill whole bytes");
    // Group sums |p| <= 127 * max|w| * group must convert to fp32 exactly (< 2^24).
    const int64_t wmax = scheme == LowbitRef::binary    ? 1
                         : scheme == LowbitRef::uniform ? (1 << (bits - 1)) - 1
                                                        : int64_t(1) << ((1 << (bits - 1)) - 2);
    if (127 * wmax * (scheme == LowbitRef::binary ? 1 : g) >= (int64_t(1) << 24) || K >= (int64_t(1) << 24))
      throw sp::InputError("lowbit_gemm: group " + p.s("group") + " too large for exact int32 -> fp32 group sums");
  }

  // The low-bit variant's work: 2MNK integer operations; bytes: the packed
  // weights with their scales, the quantized activations, the fp32 result.
  sp::Counts counts(const sp::Params& p, int) const override {
    const double M = p.i("M"), N = p.i("N"), K = p.i("K");
    sp::Counts c;
    c.flops = 2 * M * N * K;
    const double act = scheme_of(p) == LowbitRef::binary ? M * std::ceil(K / 64) * 8 : M * K;
    c.bytes_read = weight_bytes(p) + act + M * 4;
    c.bytes_written = M * N * 4;
    c.dtype = "int8";  // no low-bit probe: Machine falls back to the fp32 peak
    return c;
  }

  void setup(const sp::Params& p, int) override {
    prob_ = {int(p.i("M")), int(p.i("N")), int(p.i("K")), {}, {}};
    scheme_ = scheme_of(p);
    bits_ = int(p.i("bits")), group_ = int(p.i("group"));
    outliers_ = p.s("outliers") == "1";
    const int M = prob_.M, N = prob_.N, K = prob_.K;
    uint64_t st = 4242;  // int8_gemm's generator and seed: the same outlier matrix A
    auto uni = [&st] {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      return float(double(st >> 11) * 0x1p-53 * 2 - 1);
    };
    prob_.a.resize(size_t(M) * K), prob_.wt.resize(size_t(N) * K);
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k)
        prob_.a[size_t(i) * K + k] = uni() * (outliers_ && i % kOutlierEvery == 0 ? kOutlierScale : 1);
    std::vector<float> b(size_t(K) * N);  // W as K x N for the int8 and fp32 GEMMs
    for (auto& v : b) v = uni();
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j) prob_.wt[size_t(j) * K + k] = b[size_t(k) * N + j];
    A_ = upload(prob_.a, M, K), B_ = upload(b, K, N), Wt_ = upload(prob_.wt, N, K);
    if (scheme_ == LowbitRef::binary) {
      ba_ = pr::binarize_rows(A_);
      w_ = pr::binarize_weights(Wt_);
    } else {
      qa_ = pr::quantize(A_, pr::QuantAxis::row);
      w_ = pr::quantize_lowbit(Wt_, scheme_ == LowbitRef::log2 ? pr::LowbitScheme::log2 : pr::LowbitScheme::uniform,
                               bits_, group_);
    }
    qa8_ = pr::quantize(A_, pr::QuantAxis::row);
    qb8_ = pr::quantize(B_, pr::QuantAxis::column);
    acc_ = Mat<int32_t>("acc", M, N);
    C_ = Mat<float>("C", M, N);
#ifdef SP_HAVE_OPENBLAS
    openblas_set_num_threads(sp::kx::concurrency());
#endif
  }

  // Weights and activations are quantized before the call (as inference
  // engines hold them); timed: the GEMM and its rescale.
  // Every variant runs from one setup(): the baseline is timed in turn with
  // the main variant inside its case.
  std::vector<sp::Probe> probes(const std::string& variant) const override { return paired_with_baseline(variant); }

  void run(const std::string& variant) override {
    if (variant == "lowbit") {
      if (scheme_ == LowbitRef::binary)
        pr::gemm_xnor(ba_, w_, C_);
      else
        pr::gemm_lowbit(qa_, w_, C_);
    } else if (variant == "int8") {
      sp::kernels::gemm_lowp<int8_t, int32_t>(qa8_.q, qb8_.q, acc_);
      pr::rescale(acc_, qa8_, qb8_, C_);
    } else if (variant == "fp32") {
      sp::kernels::gemm_tiled<float>(A_, B_, C_);
    } else {
#ifdef SP_HAVE_OPENBLAS
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, prob_.M, prob_.N, prob_.K, 1.0f, A_.data(), prob_.K,
                  B_.data(), prob_.N, 0.0f, C_.data(), prob_.N);
#endif
    }
  }

  sp::CheckResult check(const std::string& variant) override {
    const auto c = to_host(C_);
    if (variant == "fp32" || variant == "openblas") return lc::check_fp32(prob_, c);
    if (variant == "int8") return lc::check_int8(prob_, to_host(qa8_.scale), to_host(qb8_.scale), c);
    lc::Built b;
    b.scheme = scheme_, b.bits = bits_, b.group = group_, b.c = c;
    b.wscale = to_host(w_.scale);
    if (scheme_ == LowbitRef::binary) {
      b.wsigns = to_host(w_.signs), b.asigns = to_host(ba_.signs), b.ascale = to_host(ba_.mean_abs);
    } else {
      b.packed = to_host(w_.packed), b.qa = to_host(qa_.q), b.ascale = to_host(qa_.scale);
    }
    return lc::check_lowbit(prob_, b);
  }

  void report_counters(const std::string& variant, std::map<std::string, double>& out) override {
    out["weight_bytes_counted"] = w_.bytes();
    if (variant != "lowbit") return;
    // The error-vs-bits curve: A (the outlier matrix when outliers=1) taken
    // as a weight matrix, rows as channels, quantized in this case's groups.
    const int M = prob_.M, K = prob_.K;
    double den = 0;
    for (float v : prob_.a) den += double(v) * v;
    for (const auto& cp : kCurve) {
      const int g = cp.scheme == LowbitRef::binary ? K : group_;
      const auto q = sp::reference::fake_quant_ref(prob_.a, M, K, cp.scheme, cp.bits, g);
      double num = 0;
      for (size_t x = 0; x < q.size(); ++x) num += (q[x] - prob_.a[x]) * (q[x] - prob_.a[x]);
      if (den > 0) out[curve_key(cp)] = std::sqrt(num / den);
    }
  }

  void predict(const sp::Params& p, const std::string& variant, const sp::Measurement& m, const sp::Machine& machine,
               std::vector<sp::Verdict>& out) const override {
    Technique::predict(p, variant, m, machine, out);
    const auto& c = m.counters;
    if (variant == "lowbit" && c.count("weight_bytes_counted")) {
      sp::Verdict v =
          sp::exact_verdict(info_.name, variant, p, "weight bytes", "B", weight_bytes(p), c.at("weight_bytes_counted"));
      char buf[160];
      std::snprintf(buf, sizeof buf, "%.2fx smaller than fp32 weights (4NK = %.0f B)",
                    4.0 * p.i("N") * p.i("K") / v.measured, 4.0 * p.i("N") * p.i("K"));
      v.note = buf;
      out.push_back(v);
    }
    for (const auto& cp : kCurve) {
      if (!c.count(curve_key(cp))) continue;
      sp::Verdict v{info_.name, variant, p.label(),
                    "outlier-matrix rel error, " + std::to_string(cp.bits) + "-bit " + cp.name, ""};
      v.predicted = curve_model(cp);
      v.measured = c.at(curve_key(cp));
      v.ratio = v.measured / v.predicted;
      v.band_lo = 0, v.band_hi = INFINITY;
      v.status = sp::Status::info;  // the curve is reported; the model assumes uniform data and group max = a
      v.note = "||W~ - W||_F / ||W||_F vs the uniform-data model (docs/compression.md)";
      out.push_back(v);
    }
  }

  void teardown() override {
    A_ = B_ = Wt_ = C_ = {};
    acc_ = {};
    w_ = {}, ba_ = {}, qa_ = {}, qa8_ = {}, qb8_ = {};
  }

 private:
  static Mat<float> upload(const std::vector<float>& h, int r, int c) {
    Mat<float> d("X", r, c);
    Kokkos::deep_copy(d, Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace>(h.data(), r, c));
    return d;
  }
  template <class V>
  static std::vector<typename V::non_const_value_type> to_host(const V& v) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    return std::vector<typename V::non_const_value_type>(h.data(), h.data() + h.span());
  }

  lc::Problem prob_;
  LowbitRef scheme_ = LowbitRef::uniform;
  int bits_ = 4, group_ = 1;
  bool outliers_ = false;
  Mat<float> A_, B_, Wt_, C_;
  Mat<int32_t> acc_;
  pr::LowbitWeights w_;
  pr::BinaryRows ba_;
  pr::Quantized qa_, qa8_, qb8_;
};

SP_REGISTER_TECHNIQUE(LowbitGemm);

}  // namespace
