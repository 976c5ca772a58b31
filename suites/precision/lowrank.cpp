// Low-rank factorisation of a linear layer (docs/compression.md): W (M x N)
// with a power-law spectrum, its truncated SVD (host one-sided Jacobi) at
// rank r, and the layer Y = X W_r = (X P) Q on the project's GEMM against
// the dense layer (project GEMM and OpenBLAS, the vendor baseline).
// Checked: singular values against the spectrum W was built with, the
// Frobenius error against Eckart-Young, and both forwards per element.
// Predicted exactly and counted: parameters r (M + N) and FLOPs 2 B r (M + N).
#include <Kokkos_Core.hpp>
#include <cmath>

#include "kernels/precision/lowrank.hpp"
#include "reference/precision/lowrank_ref.hpp"
#include "scaleproof/compare.hpp"
#include "scaleproof/kokkos_compat.hpp"
#include "scaleproof/registry.hpp"
#ifdef SP_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

namespace pr = sp::precision;
namespace ref = sp::reference;
constexpr double kU = 0x1p-24, kUd = 0x1p-53;
constexpr double kSvdTol = 1e-14;  // Jacobi's orthogonality threshold (svd_jacobi)
constexpr int kMaxDim = 2048;      // the host SVD's cost grows as min(M,N)^2 max(M,N) per sweep

// Ranks of the Eckart-Young sweep reported with every case: 1, r/2, r and full rank.
std::vector<int> sweep_ranks(int r, int k) {
  std::vector<int> out = {1};
  for (int x : {r / 2, r, k})
    if (x > out.back()) out.push_back(x);
  return out;
}

class LowRankLayer : public sp::Technique {
 public:
  LowRankLayer() : Technique(describe()) {}

  static sp::Info describe() {
    sp::Info i;
    i.name = "lowrank";
    i.family = "precision";
    i.summary = "rank-r truncated SVD of a linear layer: (X P) Q vs X W, Eckart-Young error, params and FLOPs";
    auto set = [](int b, int m, int n, int r) {
      return sp::Params{
          {"B", std::to_string(b)}, {"M", std::to_string(m)}, {"N", std::to_string(n)}, {"r", std::to_string(r)}};
    };
    for (auto [b, m, n, r] : {std::tuple{3, 8, 5, 2}, {17, 33, 20, 7}, {9, 24, 40, 24}, {5, 16, 16, 1}})
      i.param_sets.push_back({sp::Size::conformance, set(b, m, n, r)});
    for (auto [size, b, n] :
         {std::tuple{sp::Size::small, 256, 256}, {sp::Size::medium, 1024, 512}, {sp::Size::large, 2048, 1024}})
      for (int div : {16, 4}) i.param_sets.push_back({size, set(b, n, n, n / div)});
    i.variants = {sp::Variant::kernel("lowrank"), sp::Variant::kernel("dense")};
#ifdef SP_HAVE_OPENBLAS
    i.variants.push_back(sp::Variant::vendor("openblas", "openblas", sp::MemoryNeed::host));
    i.baseline = "openblas";
#endif
    i.tol.roof_min = 0.0;  // two thin GEMMs: reported against the fp32 roof, not judged
    i.headline = {"parameters", "FLOPs", sp::kHeadlineVsBaseline};
    i.source = "Eckart and Young 1936; MODELS.md Roofline";
    return i;
  }
  void validate(const sp::Params& p, int nranks) const override {
    Technique::validate(p, nranks);
    const int64_t M = p.i("M"), N = p.i("N"), r = p.i("r");
    if (r > std::min(M, N))
      throw sp::InputError("lowrank: rank r=" + p.s("r") + " exceeds min(M, N)=" + std::to_string(std::min(M, N)));
    if (M > kMaxDim || N > kMaxDim)
      throw sp::InputError("lowrank: M and N above " + std::to_string(kMaxDim) + " are not supported (host SVD)");
    if (p.i("B") * std::max(M, N) > (int64_t(1) << 30))
      throw sp::InputError("lowrank: activations above 2^30 elements are not supported");
  }

  sp::Counts counts(const sp::Params& p, int) const override {
    const double B = p.i("B"), M = p.i("M"), N = p.i("N"), r = p.i("r");
    sp::Counts c;
    c.flops = 2 * B * r * (M + N);
    c.bytes_read = 4 * (B * M + r * (M + N) + B * r);  // X, P, Q, T read back
    c.bytes_written = 4 * (B * r + B * N);             // T, Y
    c.dtype = "fp32";
    return c;
  }

  void setup(const sp::Params& p, int) override {
    B_ = int(p.i("B")), M_ = int(p.i("M")), N_ = int(p.i("N")), r_ = int(p.i("r"));
    sigma_ = ref::power_law_spectrum(std::min(M_, N_), 1.0L);
    const auto w = ref::spectrum_matrix_ref(M_, N_, sigma_, 777);
    hw_.assign(w.begin(), w.end());  // the layer's fp32 weight
    std::vector<double> wd(hw_.begin(), hw_.end());
    svd_ = pr::svd_jacobi(wd, M_, N_, kSvdTol);
    lr_ = pr::truncate(svd_, r_);
    uint64_t st = 31;
    hx_.resize(size_t(B_) * M_);
    for (auto& v : hx_) {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      v = float(double(st >> 11) * 0x1p-53 * 2 - 1);
    }
    X_ = upload(hx_), W_ = upload(hw_);
    T_ = Kokkos::View<float*>("T", size_t(B_) * r_);
    Y_ = Kokkos::View<float*>("Y", size_t(B_) * N_);
#ifdef SP_HAVE_OPENBLAS
    openblas_set_num_threads(sp::kx::concurrency());
#endif
  }

  // Every variant runs from one setup(): the baseline is timed in turn with
  // the main variant inside its case.
  std::vector<sp::Probe> probes(const std::string& variant) const override { return paired_with_baseline(variant); }

  void run(const std::string& variant) override {
    if (variant == "lowrank")
      pr::lowrank_forward(B_, X_.data(), lr_, T_.data(), Y_.data());
    else if (variant == "dense")
      pr::dense_forward(B_, M_, N_, X_.data(), W_.data(), Y_.data());
    else {
#ifdef SP_HAVE_OPENBLAS
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B_, N_, M_, 1.0f, X_.data(), M_, W_.data(), N_, 0.0f,
                  Y_.data(), N_);
#endif
    }
  }

  sp::CheckResult check(const std::string& variant) override {
    const auto y = host(Y_);
    const auto X = ref::widen(hx_);
    std::vector<long double> want, abs;
    if (variant != "lowrank") {  // the dense layer: gamma_M |X||W| (Higham eq. 3.5)
      ref::product_ref(B_, M_, N_, X, ref::widen(hw_), want, abs);
      sp::Comparator c("dense: |Y - XW| <= gamma_M |X||W|");
      const double g = sp::gamma_n(M_, kU);
      for (size_t e = 0; e < y.size(); ++e) c.add(y[e], double(want[e]), g * double(abs[e]));
      return c.result();
    }
    // 1. Singular values against the spectrum W was built with: Weyl's
    // inequality moves each by at most ||W32 - W||_2 <= ||E||_F (E the fp32
    // rounding of W), plus the Jacobi SVD's error svd_bound().
    sp::Comparator sv(
        "|s_i - s_i(built)| <= ||E||_F + svd bound; | ||W - PQ||_F - EY | <= ||E||_F + 3 svd bound + 2.1u sum_c "
        "|p_c||q_c|");
    const double svd_err = svd_bound(), e_norm = fp32_rounding_norm();
    for (int c = 0; c < svd_.k; ++c) sv.add(svd_.s[c], double(sigma_[c]), e_norm + svd_err);
    // 2. Eckart-Young at the case's rank.
    const auto P = host(lr_.P), Q = host(lr_.Q);
    sv.add(double(ref::lowrank_error_ref(hw_, P, Q, M_, N_, r_)), double(ref::eckart_young_ref(sigma_, r_)),
           ey_bound(P, Q, r_, e_norm, svd_err));
    sp::CheckResult res = sv.result();
    res.merge(check_factors(P, Q, svd_err));
    // 3. The forward: T = fl(XP) within gamma_M |X||P|, Y = fl(TQ) within
    // gamma_r |T||Q| <= gamma_r (1 + gamma_M) |X||P||Q|.
    std::vector<long double> t, tabs, ignore, yabs;
    ref::product_ref(B_, M_, r_, X, ref::widen(P), t, tabs);
    ref::product_ref(B_, r_, N_, t, ref::widen(Q), want, abs);
    ref::product_ref(B_, r_, N_, tabs, ref::widen(Q), ignore, yabs);  // |X||P| Q: its abs sum is (|X||P|)|Q|
    const double gM = sp::gamma_n(M_, kU), gr = sp::gamma_n(r_, kU);
    sp::Comparator fw("lowrank: |Y - XPQ| <= (gamma_M + gamma_r (1 + gamma_M)) |X||P||Q|");
    for (size_t e = 0; e < y.size(); ++e) fw.add(y[e], double(want[e]), (gM + gr * (1 + gM)) * double(yabs[e]));
    res.merge(fw.result());
    return res;
  }

  void report_counters(const std::string& variant, std::map<std::string, double>& out) override {
    if (variant != "lowrank") return;
    out["params_counted"] = lr_.params();
    pr::FlopCount fc;  // one forward, its products counted as issued
    pr::lowrank_forward(B_, X_.data(), lr_, T_.data(), Y_.data(), &fc);
    out["flops_counted"] = fc.flops;
    out["svd_sweeps"] = svd_.sweeps;
    const double svd_err = svd_bound(), e_norm = fp32_rounding_norm();
    for (int r : sweep_ranks(r_, svd_.k)) {
      const auto lr = pr::truncate(svd_, r);
      const auto P = host(lr.P), Q = host(lr.Q);
      const std::string tag = "_r" + std::to_string(r);
      out["fro_err" + tag] = double(ref::lowrank_error_ref(hw_, P, Q, M_, N_, r));
      out["eckart_young" + tag] = double(ref::eckart_young_ref(sigma_, r));
      out["ey_bound" + tag] = ey_bound(P, Q, r, e_norm, svd_err);
      out["params_counted" + tag] = lr.params();
    }
  }

  void predict(const sp::Params& p, const std::string& variant, const sp::Measurement& m, const sp::Machine& machine,
               std::vector<sp::Verdict>& out) const override {
    Technique::predict(p, variant, m, machine, out);
    const auto& c = m.counters;
    const double B = p.i("B"), M = p.i("M"), N = p.i("N");
    auto exact = [&](const std::string& q, double predicted, double counted, const std::string& note) {
      out.push_back(sp::exact_verdict(info_.name, variant, p, q, "", predicted, counted, note));
    };
    if (!c.count("params_counted")) return;
    const int r = int(p.i("r"));
    char buf[200];
    std::snprintf(buf, sizeof buf, "r (M + N) = %.0f vs dense M N = %.0f; FLOP break-even rank M N / (M + N) = %.1f",
                  r * (M + N), M * N, M * N / (M + N));
    exact("parameters", r * (M + N), c.at("params_counted"), buf);
    exact("FLOPs", 2 * B * r * (M + N), c.at("flops_counted"), "2 B r (M + N), counted product by product");
    for (int rs : sweep_ranks(r, int(std::min(M, N)))) {
      const std::string tag = "_r" + std::to_string(rs);
      if (!c.count("fro_err" + tag)) continue;
      exact("parameters at rank " + std::to_string(rs), rs * (M + N), c.at("params_counted" + tag), "r (M + N)");
      sp::Verdict v{info_.name, variant, p.label(), "Frobenius error vs Eckart-Young, rank " + std::to_string(rs), ""};
      v.predicted = c.at("eckart_young" + tag), v.measured = c.at("fro_err" + tag);
      // Judged: the deviation over its derived bound (check()'s rule) must be <= 1.
      v.ratio = std::fabs(v.measured - v.predicted) / c.at("ey_bound" + tag);
      v.band_lo = 0, v.band_hi = 1;
      v.status = sp::pass_if(v.ratio <= 1);
      std::snprintf(buf, sizeof buf, "||W - W_r||_F %.6g vs sqrt(sum_{i>=r} s_i^2) %.6g, bound %.3g", v.measured,
                    v.predicted, c.at("ey_bound" + tag));
      v.note = buf;
      out.push_back(v);
    }
  }

  void teardown() override { X_ = W_ = T_ = Y_ = {}, lr_ = {}; }

 private:
  static Kokkos::View<float*> upload(const std::vector<float>& h) {
    Kokkos::View<float*> d("X", h.size());
    Kokkos::deep_copy(d, Kokkos::View<const float*, Kokkos::HostSpace>(h.data(), h.size()));
    return d;
  }
  static std::vector<float> host(const Kokkos::View<float*>& v) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    return std::vector<float>(h.data(), h.data() + h.size());
  }
  // The factors themselves: Q's rows orthonormal, |Q Q^T - I| <= 2.1u +
  // 8 sweeps k u_d per element (fp32 storage of rotations accumulated in
  // double), and P = W Q^T as U_r diag(s_r) = W V_r requires:
  // |P - W Q^T| <= u |P| + 2.1u |W||Q^T| + svd bound per element.
  sp::CheckResult check_factors(const std::vector<float>& P, const std::vector<float>& Q, double svd_err) const {
    sp::Comparator c("|Q Q^T - I| <= 2.1u + 8 sweeps k u_d; |P - W Q^T| <= u|P| + 2.1u |W||Q^T| + svd bound");
    const double orth = 2.1 * kU + 8.0 * svd_.sweeps * svd_.k * kUd;
    for (int a = 0; a < r_; ++a)
      for (int b = 0; b < r_; ++b) {
        long double d = 0;
        for (int j = 0; j < N_; ++j) d += (long double)Q[size_t(a) * N_ + j] * Q[size_t(b) * N_ + j];
        c.add(double(d), a == b ? 1.0 : 0.0, orth);
      }
    for (int i = 0; i < M_; ++i)
      for (int a = 0; a < r_; ++a) {
        long double d = 0, m = 0;
        for (int j = 0; j < N_; ++j) {
          const long double x = (long double)hw_[size_t(i) * N_ + j] * Q[size_t(a) * N_ + j];
          d += x, m += x < 0 ? -x : x;
        }
        const double p = P[size_t(i) * r_ + a];
        c.add(p, double(d), kU * std::fabs(p) + 2.1 * kU * double(m) + svd_err);
      }
    return c.result();
  }
  // ||W32 - W||_F: W as built (long double) against the fp32 copy the layer holds.
  double fp32_rounding_norm() const {
    const auto w = ref::spectrum_matrix_ref(M_, N_, sigma_, 777);
    long double e = 0;
    for (size_t x = 0; x < w.size(); ++x) e += (hw_[x] - w[x]) * (hw_[x] - w[x]);
    return double(std::sqrt(e));
  }
  // The Jacobi SVD's error on singular values and on the truncation:
  // orthogonality left at kSvdTol per pair (relative n tol), backward error
  // 8 u_d per rotation, n - 1 rotations per column per sweep, times ||W||_F.
  double svd_bound() const {
    double w2 = 0;
    for (float v : hw_) w2 += double(v) * v;
    return (svd_.k * kSvdTol + 8.0 * svd_.sweeps * svd_.k * kUd) * std::sqrt(w2);
  }
  // |  ||W32 - P Q||_F - EY | bound: E, the SVD, and P, Q rounded to fp32
  // (each rank-1 term p_c q_c^T moves by <= (2u + u^2) |p_c| |q_c|).
  double ey_bound(const std::vector<float>& P, const std::vector<float>& Q, int r, double e_norm,
                  double svd_err) const {
    double pq = 0;
    for (int c = 0; c < r; ++c) {
      double p2 = 0, q2 = 0;
      for (int i = 0; i < M_; ++i) p2 += double(P[size_t(i) * r + c]) * P[size_t(i) * r + c];
      for (int j = 0; j < N_; ++j) q2 += double(Q[size_t(c) * N_ + j]) * Q[size_t(c) * N_ + j];
      pq += std::sqrt(p2 * q2);
    }
    return e_norm + 3 * svd_err + 2.1 * kU * pq;
  }

  int B_ = 0, M_ = 0, N_ = 0, r_ = 0;
  std::vector<long double> sigma_;
  std::vector<float> hw_, hx_;
  pr::Svd svd_;
  pr::LowRank lr_;
  Kokkos::View<float*> X_, W_, T_, Y_;
};

SP_REGISTER_TECHNIQUE(LowRankLayer);

}  // namespace
