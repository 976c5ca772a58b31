#pragma once
// Predictions for dp_train, judged against the counters of rank 0 (the rank
// whose counters the results hold): bytes sent per step, the parameter
// server's load, bytes held per memory category at its peak, bytes over the
// host link when offloading, and the IMB-NBC overlap %. Formulas from
// kernels/dataparallel/zero_model.hpp (docs/dataparallel.md) with the suite's
// convention of P + G + K = es + es + 2 es bytes per parameter (fp32: 4+4+8;
// the paper's mixed precision is 2+2+12, same structure, same 16 total).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/dataparallel/dp_strategy.hpp"
#include "kernels/dataparallel/memory_tracker.hpp"
#include "kernels/dataparallel/mlp_shape.hpp"
#include "kernels/dataparallel/zero_model.hpp"
#include "scaleproof/technique.hpp"

namespace sp::dp {

// Intel MPI Benchmarks, NBC suite: overlap = 100 max(0, min(1, (t_pure + t_cpu - t_ovrl) / min(t_pure, t_cpu))).
inline double imb_nbc_overlap_pct(double t_pure, double t_cpu, double t_ovrl) {
  const double lo = std::min(t_pure, t_cpu);
  if (!(lo > 0)) return 0;
  return 100 * std::max(0.0, std::min(1.0, (t_pure + t_cpu - t_ovrl) / lo));
}

// Ratio measured/predicted with an accepted band [1 - slack, hi]; 0/0 counts as 1.
inline Verdict dp_verdict(const std::string& name, const Params& p, const std::string& variant,
                          const std::string& quantity, double predicted, double measured, double slack_abs,
                          double band_hi_abs, std::string note) {
  Verdict v{name, variant, p.label(), quantity, "bytes"};
  v.predicted = predicted, v.measured = measured;
  if (predicted > 0) {
    v.ratio = measured / predicted;
    v.band_lo = 1 - slack_abs / predicted;
    v.band_hi = (predicted + band_hi_abs) / predicted;
  } else {
    v.ratio = measured == 0 ? 1 : INFINITY;
    v.band_lo = v.band_hi = 1;
  }
  v.judge();
  v.note = std::move(note);
  return v;
}

inline void append_dp_verdicts(const std::string& name, const Params& prm, const MlpShape& s, size_t bucket_cap,
                               const std::string& variant, const Measurement& m, std::vector<Verdict>& out) {
  auto counter = [&](const std::string& k) {
    auto it = m.counters.find(k);
    return it == m.counters.end() ? 0.0 : it->second;  // zero counters are not reported
  };
  if (!m.counters.count("shard_params")) return;  // not a dp_train measurement
  const Variant v = parse_variant(variant);
  const double es = prm.s("dtype") == "fp32" ? 4 : 8, psi = static_cast<double>(s.n_params());
  const double p = m.ranks, L = s.layers();
  const Precision pr{prm.s("dtype"), es, es, 2 * es};
  const Stage stage = v.strategy == Strategy::zero1   ? Stage::zero1
                      : v.strategy == Strategy::zero2 ? Stage::zero2
                      : v.strategy == Strategy::zero3 ? Stage::zero3
                                                      : Stage::ddp;
  const StageCost cost = zero_cost(stage, psi, p, pr, true);
  // Balanced chunks: rank 0's shard exceeds psi/p by less than one element per layer.
  const double chunk_slack = L * es;

  // Traffic: ring-exact 2 Psi (DDP, ZeRO-1/2) or 3 Psi (ZeRO-3) per step; each
  // collective phase may differ from (p-1)/p n by under one element.
  if (v.strategy == Strategy::param_server) {
    const double load = counter("bytes_sent_per_step") + counter("bytes_recv_per_step");
    out.push_back(dp_verdict(name, prm, variant, "server load per step (sent+recv)", param_server_load(psi, p, es),
                             load, 0, 0, "2 (p-1) Psi es at rank 0, the server"));
  } else {
    // DDP all-reduces buckets (2 phases each); ZeRO works per layer.
    const double phases = stage == Stage::zero3 ? 3 * L
                          : stage == Stage::ddp ? 2.0 * s.buckets(bucket_cap).size()
                                                : 2 * L;
    char note[128];
    std::snprintf(note, sizeof note, "%s Psi (p-1)/p, ring; %.0f collective phases", stage == Stage::zero3 ? "3" : "2",
                  phases);
    out.push_back(dp_verdict(name, prm, variant, "bytes sent per step", cost.traffic, counter("bytes_sent_per_step"),
                             p > 1 ? phases * es : 0, p > 1 ? phases * es : 0, note));
  }

  // Memory at its peak, per category, vs the formula term plus the transient
  // buffers the algorithm needs by design (one layer's full gradient before its
  // reduce-scatter; ZeRO-3's gathered layer, two with prefetch).

  size_t pair = s.max_block();  // one layer when there is no neighbour to prefetch
  for (int l = 1; l < s.layers(); ++l) pair = std::max(pair, s.block_size(l) + s.block_size(l + 1));
  const double maxb = static_cast<double>(s.max_block()) * es;
  const bool server = v.strategy == Strategy::param_server;
  double params = cost.params, grads = cost.grads, optim = cost.optim, grads_hi = 0, params_slack = 0;
  const char* params_note = "P Psi, P = es";
  const char* grads_note = "G Psi, G = es";
  if (stage == Stage::zero3) {
    params += v.overlap ? static_cast<double>(pair) * es : maxb;
    params_slack = chunk_slack;
    params_note = v.overlap ? "P Psi/p + two adjacent gathered layers (prefetch)" : "P Psi/p + one gathered layer";
  }
  if (stage == Stage::zero2 || stage == Stage::zero3) {
    grads += maxb;
    grads_note = "G Psi/p + one layer's full gradient before its reduce-scatter";
    if (v.overlap) {
      grads_hi = (psi * es) - maxb;  // every layer's gradient may still be in flight
      grads_note = "G Psi/p + between one layer's and all layers' full gradients (in flight)";
    }
  }
  if (server) optim = 2 * es * psi;  // rank 0 is the server: full Adam state (workers hold none)
  if (v.offload) optim = 0;
  const double sh = (stage == Stage::ddp) ? 0 : chunk_slack;
  out.push_back(dp_verdict(name, prm, variant, "peak params", params, counter("peak_params"), 0,
                           stage == Stage::zero3 ? params_slack : 0, params_note));
  out.push_back(dp_verdict(name, prm, variant, "peak grads", grads, counter("peak_grads"), 0,
                           (stage == Stage::zero2 || stage == Stage::zero3 ? chunk_slack : 0) + grads_hi, grads_note));
  out.push_back(dp_verdict(name, prm, variant, "peak optimizer state (device)", optim, counter("peak_optim"), 0,
                           v.offload ? 0 : 2 * sh,
                           server ? "K Psi at the server, K = 2 es (m, v)" : "K Psi (/p when sharded), K = 2 es"));
  if (v.offload) {
    out.push_back(dp_verdict(name, prm, variant, "peak host optimizer memory", 4 * es * psi / p,
                             counter("peak_host_optim"), 0, 4 * chunk_slack,
                             "master shard + m + v + gradient shard in host memory: 4 es Psi/p"));
    out.push_back(dp_verdict(name, prm, variant, "host link bytes per step", 2 * es * psi / p,
                             counter("host_link_bytes_per_step"), 0, 2 * chunk_slack,
                             "gradient shard down + parameter shard up: 2 es Psi/p (ZeRO-Offload, per rank)"));
  }
  // The docs/dataparallel.md table's total for this stage against the measured model states (INFO:
  // the measured side includes the transient buffers judged above).
  Verdict total =
      dp_verdict(name, prm, variant, "model states vs (P+G+K) formula", cost.total(),
                 counter("peak_params") + counter("peak_grads") + counter("peak_optim") + counter("peak_host_optim"), 0,
                 0, "sum of category peaks incl. transients; fp32 convention 4+4+8 B/param");
  total.status = sp::Status::info;
  out.push_back(total);
  if (m.counters.count("t_ovrl_s")) {
    const double overlap = imb_nbc_overlap_pct(counter("t_pure_comm_s"), counter("t_cpu_s"), counter("t_ovrl_s"));
    Verdict o{name, variant, prm.label(), "overlap (IMB-NBC)", "%"};
    o.predicted = v.overlap ? 100 : 0;
    o.measured = overlap;
    o.ratio = overlap / 100;
    o.band_lo = 0, o.band_hi = 1;
    o.status = sp::Status::info;
    char note[160];
    std::snprintf(note, sizeof note, "t_pure %.3g ms, t_cpu %.3g ms, t_ovrl %.3g ms", 1e3 * counter("t_pure_comm_s"),
                  1e3 * counter("t_cpu_s"), 1e3 * counter("t_ovrl_s"));
    o.note = note;
    out.push_back(o);
  }
}

}  // namespace sp::dp
