#pragma once
// The "fraction of GEMM rate" verdict of the training techniques: their
// FLOP/s over the FLOP/s of the project's GEMM (the same tiled kernel behind
// nn::gemm) at the matrix shapes they multiply, in the same process and
// storage type. A technique lists its products (gemm_shapes), has them
// timed in turn with its own call (GemmAtShapes, gemm_rate_probes), and its
// predict() calls append_gemm_rate_verdict(). Measured and judged at one
// rank only, where a step is nothing but its arithmetic: with more ranks
// communication and waiting enter the call and the comparison says nothing.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernels/nn/gemm.hpp"
#include "scaleproof/comm.hpp"
#include "scaleproof/measure.hpp"
#include "scaleproof/technique.hpp"

namespace sp::nn {

inline constexpr const char* kGemmRateCounter = "gemm_rate_flops";
// Accepted band: a technique built on the GEMM keeps at least half its rate
// (the rest goes to the element-wise layers, the optimizer and launches).
inline constexpr double kGemmRateMin = 0.5;

// One product C (m x n) = A (m x k) B (k x n), made `count` times per call.
struct GemmShape {
  int m, n, k;
  double count = 1;
  double flops() const { return 2.0 * m * n * k * count; }
};

// The products of one call of a technique, for the GEMM-rate comparison:
// the service times them and the technique's call in turn, call by call
// (a Probe), so that drift on a shared machine hits both alike. A
// technique prepares it at its shapes and storage type (in
// report_counters), declares gemm_rate_probes(variant) and runs run() when
// a probe call is kGemmCall; gemm_rate_counters() then turns the probe's
// times into the counters the verdict reads.
inline constexpr const char* kGemmCall = "gemm_at_shapes";
inline constexpr const char* kStepSeconds = "gemm_rate_step_s";  // the technique's call, median of the probe
inline constexpr const char* kGemmSeconds = "gemm_rate_gemm_s";  // its products alone, median of the probe

class GemmAtShapes {
 public:
  template <class S>
  void prepare(const std::vector<GemmShape>& shapes) {
    calls_.clear();
    flops_ = 0;
    for (const auto& sh : shapes) {
      if (sh.m <= 0 || sh.n <= 0 || sh.k <= 0 || sh.count <= 0) continue;
      Kokkos::View<S*> A("rate_a", size_t(sh.m) * sh.k), B("rate_b", size_t(sh.k) * sh.n),
          C("rate_c", size_t(sh.m) * sh.n);
      const int times = static_cast<int>(std::lround(sh.count));
      calls_.push_back([=] {
        for (int i = 0; i < times; ++i)
          gemm(Op::N, Op::N, sh.m, sh.n, sh.k, A.data(), sh.k, B.data(), sh.n, C.data(), sh.n);
      });
      flops_ += 2.0 * sh.m * sh.n * sh.k * times;
    }
  }
  void run() const {
    for (const auto& c : calls_) c();
  }
  double flops() const { return flops_; }
  void clear() { calls_.clear(), flops_ = 0; }

 private:
  std::vector<std::function<void()>> calls_;
  double flops_ = 0;
};

// The probe: the technique's call (`step`, the call name that runs one
// call of the variant, usually the variant itself) and its products, 3
// times each in turn after the timed loop (the median of 3 pairs); none
// with more than one rank.
inline std::vector<Probe> gemm_rate_probes(const std::string& step) {
  if (comm::size() > 1) return {};
  Probe p{"gemm_rate", {step, kGemmCall}};
  p.each = {kStepSeconds, kGemmSeconds};
  p.samples = 3;
  return {p};
}

// After the probe: the GEMM's FLOP/s at the technique's shapes (counter
// kGemmRateCounter), from the products' median time.
inline void gemm_rate_counters(const GemmAtShapes& g, std::map<std::string, double>& out) {
  const auto it = out.find(kGemmSeconds);
  if (it != out.end() && it->second > 0 && g.flops() > 0) out[kGemmRateCounter] = g.flops() / it->second;
}

// A technique whose only probe is the GEMM-rate comparison: it prepares
// gemm_at_ at its shapes (in report_counters) and clears it at setup; the
// probe's calls and counters are these.
class GemmRateTechnique : public Technique {
 public:
  using Technique::Technique;
  std::vector<Probe> probes(const std::string& variant) const override { return gemm_rate_probes(variant); }
  void run_probe(const std::string& call) override {
    if (call == kGemmCall)
      gemm_at_.run();
    else
      run(call);
  }
  void probes_done(const std::string&, std::map<std::string, double>& out) override {
    gemm_rate_counters(gemm_at_, out);
  }

 protected:
  GemmAtShapes gemm_at_;  // one call's products in its storage type, timed in turn with it
};

// Appends the verdict: measured = the technique's FLOP/s (its counted FLOPs
// over its call's time in the probe, timed in turn with the products),
// predicted = the GEMM's rate at its shapes from the same probe.
// judged = false reports it as INFO (a variant the band does not apply to).
inline void append_gemm_rate_verdict(const Info& info, const Params& p, const std::string& variant, double flops,
                                     const Measurement& m, bool judged, std::vector<Verdict>& out) {
  const auto it = m.counters.find(kGemmRateCounter), step = m.counters.find(kStepSeconds);
  if (it == m.counters.end() || it->second <= 0 || step == m.counters.end() || step->second <= 0 || flops <= 0) return;
  Verdict v{info.name, variant, p.label(), "fraction of GEMM rate", "FLOP/s"};
  v.predicted = it->second;
  v.measured = flops / step->second;
  v.ratio = v.measured / v.predicted;
  v.band_lo = kGemmRateMin;
  v.band_hi = INFINITY;
  const bool judge = judged && m.ranks == 1;
  v.judge(judge);
  char buf[200];
  std::snprintf(buf, sizeof buf, "%.3g GFLOP/s vs the project's GEMM at the same shapes %.3g GFLOP/s (timed in turn)%s",
                v.measured * 1e-9, v.predicted * 1e-9, judge ? "" : " (reported: not judged for this case)");
  v.note = buf;
  out.push_back(v);
}

}  // namespace sp::nn
