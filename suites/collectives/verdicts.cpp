#include "suites/collectives/verdicts.hpp"

#include <cmath>

#include <Kokkos_Core.hpp>

#include "kernels/collectives/calibrate.hpp"
#include "scaleproof/comm.hpp"

namespace sp::coll {

void collect_counters(Engine& e, const Algorithm& algo, long calls, const std::map<std::string, double>& phase_seconds,
                      std::map<std::string, double>& out) {
  const CaseSpec& s = e.spec();
  const int p = e.transport().size();
  const double S = static_cast<double>(s.bytes()), F = coll_info(s.coll).busbw_factor(p);
  const double t = out.count("t_median_s") ? out.at("t_median_s") : 0.0;  // the median call, slowest rank's
  out["S_bytes"] = S;
  out["busbw_factor"] = F;
  out["algbw_GBps"] = t > 0 ? S / t / 1e9 : 0;
  out["busbw_GBps"] = t > 0 ? S / t / 1e9 * F : 0;
  for (auto& [ph, sec] : phase_seconds) out["t_" + ph + "_us"] = comm::max(calls > 0 ? sec / calls : 0.0) * 1e6;
  // Traffic of the last call, for the phases the formulas name (the same
  // list on every rank, so the reductions match up).
  const auto& tr = e.transport().traffic();
  for (auto& [ph, bytes] : traffic_per_rank(algo, p, S)) {
    (void)bytes;
    auto it = tr.find(ph);
    const double sent = it == tr.end() ? 0.0 : static_cast<double>(it->second.bytes_sent);
    const double recv = it == tr.end() ? 0.0 : static_cast<double>(it->second.bytes_recv);
    out["tx_" + ph + "_B"] = comm::max(sent);
    out["tx_" + ph + "_all_ranks_B"] = comm::sum(sent);
    out["rx_" + ph + "_B"] = comm::max(recv);
  }
  if (algo.server_bytes) {
    const auto tot = e.transport().total();
    out["server_B"] = comm::max(static_cast<double>(tot.bytes_sent + tot.bytes_recv));
  }
}

void fit_model(Engine& e, const Algorithm& algo, const Engine::Sampler& sampler, std::map<std::string, double>& out) {
  // The calibration was sampled in turn with calls of the collective itself
  // (the model-check probe), so prediction and measurement see the same
  // machine state (on a shared machine the state can change between the
  // harness's timed loop and the probe).
  const CaseSpec& s = e.spec();
  const int p = e.transport().size();
  const double S = static_cast<double>(s.bytes());
  const AlphaBetaGamma m = sampler.fit(), pp = sampler.fit_one_way();
  out["alpha_s"] = m.alpha;
  out["beta_s_per_B"] = m.beta;
  out["gamma_s_per_B"] = m.gamma;
  out["model_us"] = predict_seconds(algo, p, S, m) * 1e6;
  out["pingpong_alpha_s"] = pp.alpha;
  out["pingpong_beta_s_per_B"] = pp.beta;
}

namespace {

sp::Verdict make(const sp::Info& info, const std::string& label, const Algorithm& algo, const std::string& q,
                 const std::string& unit, double predicted, double measured) {
  sp::Verdict v{info.name, algo.name, label, q, unit};
  v.predicted = predicted;
  v.measured = measured;
  v.ratio = predicted != 0 ? measured / predicted : (measured == 0 ? 1 : INFINITY);
  return v;
}

void band(sp::Verdict& v, double lo, double hi, bool judged, const std::string& why_not) {
  v.band_lo = lo, v.band_hi = hi;
  v.judge(judged);
  if (!judged) v.note = why_not;
}

double counter(const sp::Measurement& m, const std::string& k) {
  auto it = m.counters.find(k);
  return it == m.counters.end() ? NAN : it->second;
}

}  // namespace

void judge_case(const sp::Info& info, const CaseSpec& s, const std::string& label, const Algorithm& algo,
                const sp::Measurement& m, std::vector<sp::Verdict>& out) {
  const int p = m.ranks;
  const double S = static_cast<double>(s.bytes());

  // Time: alpha-beta-gamma model, calibrated in the same run.
  if (has_model(algo) && !std::isnan(counter(m, "alpha_s"))) {
    const AlphaBetaGamma abg{counter(m, "alpha_s"), counter(m, "beta_s_per_B"), counter(m, "gamma_s_per_B")};
    const double pred = predict_seconds(algo, p, S, abg);
    const double checked = counter(m, kModelCheck);
    if (!std::isnan(pred) && !std::isnan(checked)) {
      auto v = make(info, label, algo, "time (alpha-beta model)", "us", pred * 1e6, checked * 1e6);
      const double tol = info.tol.prediction_rel;
      const bool judged = p >= 2 && S >= kJudgedBytes && s.inplace;
      band(v, 1 - tol, 1 + tol, judged,
           p < 2        ? "p = 1: nothing to communicate"
           : !s.inplace ? "out of place adds a copy the model leaves out"
                        : "below 1 MiB: latency noise dominates");
      char buf[220];
      std::snprintf(
          buf, sizeof buf,
          "alpha %.3g us, beta %.3g GB/s, gamma %.3g GB/s; err %+.1f%% (vs the benchmark's own time: %+.1f%%)",
          abg.alpha * 1e6, abg.beta > 0 ? 1e-9 / abg.beta : 0.0, abg.gamma > 0 ? 1e-9 / abg.gamma : 0.0,
          100 * (v.ratio - 1), 100 * (m.seconds / pred - 1));
      v.note = v.note.empty() ? buf : v.note + "; " + buf;
      out.push_back(v);
      // The textbook calibration (ping-pong alpha and beta) beside it, reported:
      // for exchange-pattern algorithms it shows how far a one-way beta is off.
      if (algo.cycle.link == Link::exchange && !std::isnan(counter(m, "pingpong_beta_s_per_B"))) {
        const AlphaBetaGamma one{counter(m, "pingpong_alpha_s"), counter(m, "pingpong_beta_s_per_B"), abg.gamma};
        auto w = make(info, label, algo, "time (alpha-beta, ping-pong calibration)", "us",
                      predict_seconds(algo, p, S, one) * 1e6, checked * 1e6);
        band(w, 0, INFINITY, false, "one-way beta on an exchange-pattern algorithm (reported)");
        std::snprintf(buf, sizeof buf, "alpha %.3g us, beta %.3g GB/s; err %+.1f%%", one.alpha * 1e6,
                      one.beta > 0 ? 1e-9 / one.beta : 0.0, 100 * (w.ratio - 1));
        w.note += "; " + std::string(buf);
        out.push_back(w);
      }
    }
  }
  // Bus bandwidth as nccl-tests defines it (reported).
  {
    const double F = coll_info(s.coll).busbw_factor(p);
    auto v = make(info, label, algo, "busbw (nccl-tests)", "GB/s", NAN, m.seconds > 0 ? S / m.seconds / 1e9 * F : 0);
    v.predicted = counter(m, "model_us") > 0 ? S / (counter(m, "model_us") * 1e-6) / 1e9 * F : 0;
    v.ratio = v.predicted > 0 ? v.measured / v.predicted : 0;
    band(v, 0, INFINITY, false, "busbw = S/t * " + std::to_string(F).substr(0, 5) + " (nccl-tests doc/PERFORMANCE.md)");
    out.push_back(v);
  }
  // Traffic counted by the transport vs the formulas (exact when p | count).
  const bool exact = s.count % p == 0;
  for (auto& [ph, bytes] : traffic_per_rank(algo, p, S)) {
    const double got = counter(m, "tx_" + ph + "_B");
    if (std::isnan(got)) continue;
    auto v = make(info, label, algo, "bytes sent per rank, " + ph, "B", bytes, got);
    band(v, 1, 1, exact, "p does not divide count: chunks differ by one element");
    out.push_back(v);
    if (algo.p_minus_1_n_per_phase) {
      auto all = make(info, label, algo, "bytes sent by all ranks, " + ph + " ((p-1)n)", "B", (p - 1) * S,
                      counter(m, "tx_" + ph + "_all_ranks_B"));
      band(all, 1, 1, true, "");
      out.push_back(all);
    }
  }
  if (algo.server_bytes && p > 1) {
    auto v = make(info, label, algo, "bytes through the server (2(p-1)n)", "B", algo.server_bytes(p, S),
                  counter(m, "server_B"));
    band(v, 1, 1, true, "");
    out.push_back(v);
  }
}

}  // namespace sp::coll
