#include "suites/hybrid/block_pass_rates.hpp"

#include "kernels/hybrid/cost_model.hpp"

namespace sp::hybrid {

std::string pass_gemm_counter(const GemmShape::Key& key) {
  const auto& [m, n, k, ops] = key;
  return "gemm_flops_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "_" + to_string(ops);
}

BlockPassFigures block_pass_figures(const PhaseClock& clock, const BlockAct& a, double elem_bytes) {
  BlockPassFigures f;
  std::map<GemmShape::Key, std::pair<double, double>> pooled;  // FLOPs, seconds
  for (bool backward : {false, true}) {
    const std::vector<BlockGemm> gemms = backward ? block_gemms_backward(a) : block_gemms_forward(a);
    for (size_t i = 0; i < gemms.size(); ++i) {
      const char* phase = block_phase_gemm(backward, int(i));
      const long calls = clock.count(phase);
      if (calls == 0) continue;
      const BlockGemm& g = gemms[i];
      auto& p = pooled[GemmShape{g.m, g.n, g.k, 1, g.ops}.key()];
      p.first += 2.0 * g.m * g.n * g.k * g.count * double(calls);
      p.second += clock.total(phase);
    }
  }
  for (const auto& [key, p] : pooled)
    if (p.second > 0) f.gemm_rate[key] = p.first / p.second;
  const long fwd = clock.count(kPhaseAttentionForward), bwd = clock.count(kPhaseAttentionBackward);
  if (fwd > 0) f.attention_forward_s = clock.total(kPhaseAttentionForward) / double(fwd);
  if (bwd > 0) f.attention_backward_s = clock.total(kPhaseAttentionBackward) / double(bwd);
  // One forward and one backward per block pass: the attention core's calls count them.
  const double ew_s = clock.total(kPhaseElementwise);
  if (fwd > 0 && fwd == bwd && ew_s > 0) {
    const BlockElementwise e = block_elementwise_elems(double(a.n()), a.k.h, a.k.fl, 0);
    f.elementwise_bw = (e.fwd + e.bwd) * elem_bytes * double(fwd) / ew_s;
  }
  return f;
}

}  // namespace sp::hybrid
