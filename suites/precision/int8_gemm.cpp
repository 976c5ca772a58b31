// Int8 quantized GEMM (docs/precision.md "Quantization"): symmetric absmax
// quantization per tensor or per channel (rows of A, columns of B), int8 x
// int8 products accumulated exactly in int32, rescaled by sa * sb to fp32.
// Checked per element: int32 accumulators equal the exact integer product;
// dequantization error <= scale/2 (+ the fp32 division's rounding); the
// result within the analytical quantization bound of the fp32 product.
// Measured: error per-tensor vs per-channel on a matrix with outlier
// channels (where per-channel scales pay off), and speed against fp32 GEMM.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>

#include "kernels/gemm/gemm_tiled.hpp"
#include "kernels/precision/gemm_lowp.hpp"
#include "kernels/precision/quantize.hpp"
#include "reference/precision/quant_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/registry.hpp"

namespace {

namespace pr = sp::precision;
using pr::QuantAxis;
template <class T>
using Mat = Kokkos::View<T**, Kokkos::LayoutRight>;

constexpr double kU32 = 0x1p-24;
constexpr int kOutlierEvery = 32;        // every 32nd row of A is an outlier channel
constexpr float kOutlierScale = 100.0f;  // ... 100x larger than the rest

// Per-element dequantization bound: |x - q s| <= s/2 exactly for q = round(x/s);
// computing x/s in fp32 perturbs the quotient by <= u*127(1+2u), hence s*(1/2 + 256u).
double dequant_bound(double s) { return s * (0.5 + 256 * kU32); }

class Int8Gemm : public sp::Technique {
 public:
  Int8Gemm() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "int8_gemm";
    i.family = "precision";
    i.summary = "absmax int8 quantization (per tensor/channel), int8 x int8 -> int32 GEMM, rescale";
    auto set = [](int m, int n, int k, const char* sc, int outliers) {
      return sp::Params{{"M", std::to_string(m)},
                        {"N", std::to_string(n)},
                        {"K", std::to_string(k)},
                        {"scaling", sc},
                        {"outliers", std::to_string(outliers)}};
    };
    for (const char* sc : {"tensor", "channel"}) {
      for (auto [m, n, k, o] : {std::tuple{1, 1, 1, 0}, {33, 17, 65, 0}, {64, 9, 40, 1}})
        i.param_sets.push_back({sp::Size::conformance, set(m, n, k, sc, o)});
      for (int o : {0, 1}) {
        i.param_sets.push_back({sp::Size::small, set(256, 256, 256, sc, o)});
        i.param_sets.push_back({sp::Size::medium, set(1024, 1024, 1024, sc, o)});
        i.param_sets.push_back({sp::Size::large, set(2048, 2048, 2048, sc, o)});
      }
    }
    i.param_rules = {{"outliers", 0, 1}};
    i.variants = {sp::Variant::kernel("kokkos")};
    i.tol.roof_min = 0.0;  // no int8 roof is probed; position reported against fp32's
    i.source = "docs/precision.md Quantization (BMInf)";
    return i;
  }

  void validate(const sp::Params& p, int nranks) const override {
    // outliers is a 0/1 switch: the base rule (integers > 0) would refuse 0.
    sp::Params q = p;
    q.set("outliers", "1");
    Technique::validate(q, nranks);
    const auto& s = p.s("scaling");
    if (s != "tensor" && s != "channel")
      throw sp::InputError("int8_gemm: unknown scaling '" + s + "' (tensor or channel)");
    if (p.s("outliers") != "0" && p.s("outliers") != "1") throw sp::InputError("int8_gemm: outliers must be 0 or 1");
    // |acc| <= K * 127^2 must fit int32.
    if (p.i("K") > (int64_t(1) << 31) / (127 * 127) - 1)
      throw sp::InputError("int8_gemm: K too large for int32 accumulation");
    if (p.i("M") * p.i("K") > (int64_t(1) << 30) || p.i("K") * p.i("N") > (int64_t(1) << 30))
      throw sp::InputError("int8_gemm: matrices above 2^30 elements are not supported");
  }

  sp::Counts counts(const sp::Params& p, int) const override {
    const double m = p.i("M"), n = p.i("N"), k = p.i("K");
    sp::Counts c;
    c.flops = 2 * m * n * k;                   // integer multiply-adds, x2
    c.bytes_read = m * k + k * n + m * n * 4;  // int8 inputs, int32 accumulators read by the rescale
    c.bytes_written = m * n * 4 * 2;           // int32 accumulators, fp32 result
    c.dtype = "int8";                          // no int8 probe: Machine falls back to the fp32 peak
    return c;
  }

  void setup(const sp::Params& p, int) override {
    M_ = int(p.i("M")), N_ = int(p.i("N")), K_ = int(p.i("K"));
    channel_ = p.s("scaling") == "channel";
    outliers_ = p.s("outliers") == "1";
    hA_.resize(size_t(M_) * K_), hB_.resize(size_t(K_) * N_);
    uint64_t st = 4242;
    auto uni = [&st] {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      return float(double(st >> 11) * 0x1p-53 * 2 - 1);
    };
    for (int i = 0; i < M_; ++i)
      for (int k = 0; k < K_; ++k)
        hA_[size_t(i) * K_ + k] = uni() * (outliers_ && i % kOutlierEvery == 0 ? kOutlierScale : 1);
    for (auto& v : hB_) v = uni();
    A_ = upload(hA_, M_, K_), B_ = upload(hB_, K_, N_);
    qa_ = pr::quantize(A_, channel_ ? QuantAxis::row : QuantAxis::tensor);
    qb_ = pr::quantize(B_, channel_ ? QuantAxis::column : QuantAxis::tensor);
    acc_ = Mat<int32_t>("acc", M_, N_);
    C_ = Mat<float>("C", M_, N_);
  }

  // Weights and activations are quantized before the call (as inference
  // engines hold them); timed: the int8 GEMM and the rescale.
  void run(const std::string&) override {
    sp::kernels::gemm_lowp<int8_t, int32_t>(qa_.q, qb_.q, acc_);
    pr::rescale(acc_, qa_, qb_, C_);
  }

  sp::CheckResult check(const std::string&) override {
    auto qa = host(qa_.q), qb = host(qb_.q);
    auto sa = host1(qa_.scale), sb = host1(qb_.scale);
    auto acc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), acc_);
    auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C_);
    auto sA = [&](int i) { return double(sa[channel_ ? i : 0]); };
    auto sB = [&](int j) { return double(sb[channel_ ? j : 0]); };
    // 1. Dequantization error per element.
    sp::Comparator deq(
        "|x - q s| <= s*(1/2 + 256u) per element; int32 acc exact; |C - Cq| <= sum|a|eb+ea|b|+ea eb + 4u|Cq|");
    std::vector<double> ea(hA_.size()), eb(hB_.size());
    for (int i = 0; i < M_; ++i)
      for (int k = 0; k < K_; ++k) {
        const size_t x = size_t(i) * K_ + k;
        ea[x] = dequant_bound(sA(i));
        deq.add(double(qa[x]) * sA(i), hA_[x], ea[x]);
      }
    for (int k = 0; k < K_; ++k)
      for (int j = 0; j < N_; ++j) {
        const size_t x = size_t(k) * N_ + j;
        eb[x] = dequant_bound(sB(j));
        deq.add(double(qb[x]) * sB(j), hB_[x], eb[x]);
      }
    sp::CheckResult r = deq.result();
    // 2. int32 accumulation is exact.
    auto exact = sp::reference::int_gemm_ref(M_, N_, K_, qa, qb);
    sp::Comparator ints("int32 accumulator == exact integer product");
    for (int i = 0; i < M_; ++i)
      for (int j = 0; j < N_; ++j) ints.add(double(acc(i, j)), double(exact[size_t(i) * N_ + j]), 0);
    r.merge(ints.result());
    // 3. Result vs the fp32 inputs' exact product: quantization bound plus the
    // rescale's three fp32 roundings (sa*sb, int32->fp32, the product).
    std::vector<long double> cref, bound;
    sp::reference::quant_gemm_bound_ref(M_, N_, K_, hA_, hB_, ea, eb, cref, bound);
    sp::Comparator res("quantization bound");
    for (int i = 0; i < M_; ++i)
      for (int j = 0; j < N_; ++j) {
        const double cq = double(c(i, j));
        res.add(cq, double(cref[size_t(i) * N_ + j]), double(bound[size_t(i) * N_ + j]) + 4 * kU32 * std::fabs(cq));
      }
    r.merge(res.result());
    return r;
  }

  void report_counters(const std::string&, std::map<std::string, double>& out) override {
    // Both scalings on this matrix: error of A's dequantization over the
    // ordinary (non-outlier) rows, levels those rows use, and the GEMM error.
    for (bool ch : {false, true}) {
      const std::string tag = ch ? "channel" : "tensor";
      auto qa = pr::quantize(A_, ch ? QuantAxis::row : QuantAxis::tensor);
      auto qb = pr::quantize(B_, ch ? QuantAxis::column : QuantAxis::tensor);
      auto hq = host(qa.q);
      auto hs = host1(qa.scale);
      double num = 0, den = 0, levels = 0, rows = 0;
      for (int i = 0; i < M_; ++i) {
        if (outliers_ && i % kOutlierEvery == 0) continue;
        int mx = 0;
        for (int k = 0; k < K_; ++k) {
          const size_t x = size_t(i) * K_ + k;
          const double d = double(hq[x]) * hs[ch ? i : 0] - hA_[x];
          num += d * d, den += double(hA_[x]) * hA_[x];
          mx = std::max(mx, std::abs(int(hq[x])));
        }
        levels += mx, rows += 1;
      }
      if (rows > 0 && den > 0) {
        out["A_rel_err_" + tag] = std::sqrt(num / den);
        out["A_levels_" + tag] = levels / rows;  // mean max|q| over ordinary rows (127 = full range)
      }
      Mat<int32_t> acc("acc", M_, N_);
      Mat<float> c("C", M_, N_);
      sp::kernels::gemm_lowp<int8_t, int32_t>(qa.q, qb.q, acc);
      pr::rescale(acc, qa, qb, c);
      out["C_rel_err_" + tag] = rel_err_vs_exact(c, false);
      // The seed's claim is about the ordinary channels: their output rows.
      if (rows > 0) out["C_ordinary_rel_err_" + tag] = rel_err_vs_exact(c, true);
    }
    if (out.count("C_ordinary_rel_err_channel") && out["C_ordinary_rel_err_channel"] > 0)
      out["C_err_ratio_tensor_over_channel"] = out["C_ordinary_rel_err_tensor"] / out["C_ordinary_rel_err_channel"];
    if (c32_.extent(0) != size_t(M_) || c32_.extent(1) != size_t(N_)) c32_ = Mat<float>("C32", M_, N_);
  }

  // Speed: the int8 GEMM against the same kernel in fp32 on the unquantized
  // matrices and against the project's tuned fp32 GEMM; medians of 5, one
  // call of each in turn.
  std::vector<sp::Probe> probes(const std::string&) const override {
    sp::Probe p{"", {"int8", "fp32 same kernel", "fp32 gemm tiled"}};
    p.samples = 5;
    p.each = {"t_int8", "t_fp32_same_kernel", "t_fp32_gemm_tiled"};
    return {p};
  }

  void run_probe(const std::string& call) override {
    if (call == "int8")
      run("");
    else if (call == "fp32 same kernel")
      sp::kernels::gemm_lowp<float, float>(A_, B_, c32_);
    else
      sp::kernels::gemm_tiled<float>(A_, B_, c32_);
  }

  void predict(const sp::Params& p, const std::string& variant, const sp::Measurement& m, const sp::Machine& machine,
               std::vector<sp::Verdict>& out) const override {
    Technique::predict(p, variant, m, machine, out);
    const auto& c = m.counters;
    if (c.count("C_err_ratio_tensor_over_channel") && p.s("scaling") == "channel") {
      sp::Verdict v{info_.name, variant, p.label(), "GEMM error per-tensor / per-channel (ordinary rows)", "x"};
      // Resolution lost by sharing the outliers' scale: their magnitude ratio.
      v.predicted = p.s("outliers") == "1" ? kOutlierScale : 1;
      v.measured = v.ratio = c.at("C_err_ratio_tensor_over_channel");
      char buf[200];
      auto get = [&c](const char* k) { return c.count(k) ? c.at(k) : 0.0; };
      std::snprintf(buf, sizeof buf,
                    "C rel err %.3g vs %.3g (all rows %.3g vs %.3g); A %.3g vs %.3g; ordinary rows use %.1f vs %.1f of "
                    "127 levels",
                    get("C_ordinary_rel_err_tensor"), get("C_ordinary_rel_err_channel"), get("C_rel_err_tensor"),
                    get("C_rel_err_channel"), get("A_rel_err_tensor"), get("A_rel_err_channel"),
                    c.count("A_levels_tensor") ? c.at("A_levels_tensor") : 0.0,
                    c.count("A_levels_channel") ? c.at("A_levels_channel") : 0.0);
      v.note = buf;
      if (p.s("outliers") == "1") {
        // One scale per tensor loses most of the resolution on outlier channels: judged as >= 10x more error.
        v.band_lo = 10, v.band_hi = INFINITY;
        v.status = sp::pass_if(v.ratio >= v.band_lo);
      } else {
        v.band_lo = 0, v.band_hi = INFINITY, v.status = sp::Status::info;
      }
      out.push_back(v);
    }
    if (c.count("t_int8") && c.at("t_int8") > 0) {
      for (const char* base : {"t_fp32_same_kernel", "t_fp32_gemm_tiled"}) {
        sp::Verdict v{info_.name, variant, p.label(), std::string("speed vs ") + (base + 2), "x"};
        v.predicted = 1, v.measured = v.ratio = c.at(base) / c.at("t_int8");
        v.band_lo = 0, v.band_hi = INFINITY;
        // Not judged: portable Kokkos code gets no int8 dot-product instructions (VNNI, DP4A).
        v.status = sp::Status::info;
        v.note = "fp32 time / int8 time (median of 5, timings noisy on a shared machine)";
        out.push_back(v);
      }
    }
  }

 private:
  static Mat<float> upload(const std::vector<float>& h, int r, int c) {
    Mat<float> d("X", r, c);
    Kokkos::deep_copy(d, Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace>(h.data(), r, c));
    return d;
  }
  static std::vector<int8_t> host(const Mat<int8_t>& q) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), q);
    return std::vector<int8_t>(h.data(), h.data() + h.size());
  }
  static std::vector<float> host1(const Kokkos::View<float*>& s) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
    return std::vector<float>(h.data(), h.data() + h.size());
  }
  // ||C_q - C||_F / ||C||_F over all rows, or over the ordinary (non-outlier) rows only.
  double rel_err_vs_exact(const Mat<float>& c, bool ordinary_only) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
    double num = 0, den = 0;
    for (int i = 0; i < M_; ++i)
      for (int j = 0; j < N_; ++j) {
        if (ordinary_only && outliers_ && i % kOutlierEvery == 0) continue;
        long double s = 0;
        for (int k = 0; k < K_; ++k) s += (long double)hA_[size_t(i) * K_ + k] * hB_[size_t(k) * N_ + j];
        num += std::pow(double(h(i, j)) - double(s), 2), den += double(s) * double(s);
      }
    return den > 0 ? std::sqrt(num / den) : 0;
  }

  int M_ = 0, N_ = 0, K_ = 0;
  bool channel_ = false, outliers_ = false;
  std::vector<float> hA_, hB_;
  Mat<float> A_, B_, C_;
  Mat<float> c32_;  // the fp32 probes' output
  Mat<int32_t> acc_;
  pr::Quantized qa_, qb_;
};

SP_REGISTER_TECHNIQUE(Int8Gemm);

}  // namespace
