#pragma once
// The "fraction of GEMM rate" verdict of the training techniques: their
// FLOP/s over the FLOP/s of the project's GEMM (the same tiled kernel behind
// nn::gemm) at the matrix shapes they multiply, in the same process and
// storage type. A technique lists its products (gemm_shapes), reports
// gemm_rate() as a counter (kGemmRateCounter), and its predict() calls
// append_gemm_rate_verdict(). Judged only at one rank, where a step is
// nothing but its arithmetic; with more ranks communication and waiting
// enter and the ratio is reported as INFO.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/nn/gemm.hpp"
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

// FLOP/s of nn::gemm with storage S at these shapes: each shape's time per
// call is the measurement service's (per_call_seconds: called until 5 ms
// have passed, at least twice, median of three such runs), and the rate is
// total FLOPs over the total time.
template <class S>
double gemm_rate(const std::vector<GemmShape>& shapes) {
  double flops = 0, seconds = 0;
  for (const auto& sh : shapes) {
    if (sh.m <= 0 || sh.n <= 0 || sh.k <= 0 || sh.count <= 0) continue;
    Kokkos::View<S*> A("rate_a", size_t(sh.m) * sh.k), B("rate_b", size_t(sh.k) * sh.n),
        C("rate_c", size_t(sh.m) * sh.n);
    auto call = [&] { gemm(Op::N, Op::N, sh.m, sh.n, sh.k, A.data(), sh.k, B.data(), sh.n, C.data(), sh.n); };
    call();
    Kokkos::fence();
    flops += sh.flops();
    seconds += per_call_seconds(call, 5e-3, 2, 3) * sh.count;
  }
  return seconds > 0 ? flops / seconds : 0;
}

// Appends the verdict: measured = the technique's FLOP/s (its counted FLOPs
// over the measured time), predicted = the GEMM's rate at its shapes.
// judged = false reports it as INFO (a variant the band does not apply to).
inline void append_gemm_rate_verdict(const Info& info, const Params& p, const std::string& variant, double flops,
                                     const Measurement& m, bool judged, std::vector<Verdict>& out) {
  const auto it = m.counters.find(kGemmRateCounter);
  if (it == m.counters.end() || it->second <= 0 || m.seconds <= 0 || flops <= 0) return;
  Verdict v{info.name, variant, p.label(), "fraction of GEMM rate", "FLOP/s"};
  v.predicted = it->second;
  v.measured = flops / m.seconds;
  v.ratio = v.measured / v.predicted;
  v.band_lo = kGemmRateMin;
  v.band_hi = INFINITY;
  const bool judge = judged && m.ranks == 1;
  v.judge(judge);
  char buf[200];
  std::snprintf(buf, sizeof buf, "%.3g GFLOP/s vs the project's GEMM at the same shapes %.3g GFLOP/s%s",
                v.measured * 1e-9, v.predicted * 1e-9, judge ? "" : " (reported: not judged for this case)");
  v.note = buf;
  out.push_back(v);
}

}  // namespace sp::nn
