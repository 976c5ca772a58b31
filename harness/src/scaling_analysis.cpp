#include "scaling_analysis.hpp"

#include <cmath>
#include <cstdio>

#include "scaling_fit.hpp"

namespace sp {

namespace {

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[200];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

struct Pt {
  double n, t;
  bool timed;
};

// The series-level verdict, appended after the point verdicts.
Verdict series_verdict(const std::string& tech, const std::string& variant, const std::string& params,
                       const std::string& law, double f, double band, int timed, int dof, int judged,
                       int failed_points) {
  Verdict v{tech, variant, params, law + " parallel fraction f", ""};
  v.measured = v.ratio = f;
  v.band_lo = 0, v.band_hi = 1 + band;
  if (timed < 2) {
    v.status = Status::info;
    v.note = "fewer than 2 timed points: nothing fitted";
  } else if (!(f >= v.band_lo && f <= v.band_hi)) {
    v.status = Status::fail;
    v.note = f < 0 ? "time grows with N: the law does not describe this sweep"
                   : "superlinear: f > 1 means a negative serial time";
  } else if (dof == 0) {
    v.status = Status::info;
    // Amdahl fits 2 parameters to all timed points; Gustafson 1 to those beyond the reference.
    v.note = law == "Amdahl"
                 ? "exact fit (" + std::to_string(timed) + " timed points for 2 parameters)"
                 : "exact fit (" + std::to_string(timed - 1) + " timed point beyond the reference for 1 parameter)";
    v.note += ": speedups not judged";
  } else {
    v.status = failed_points ? Status::fail : Status::pass;
    v.note = std::to_string(failed_points) + " of " + std::to_string(judged) + " judged speedups outside the band";
  }
  return v;
}

}  // namespace

ScalingAnalysis analyse_sweep(const nlohmann::json& sweep) {
  ScalingAnalysis out;
  out.fits = nlohmann::json::array();
  const std::string tech = sweep.at("technique"), mode = sweep.at("mode"), axis = sweep.at("axis");
  const double band = sweep.at("band");
  const bool strong = mode == "strong";
  for (auto& s : sweep.at("series")) {
    std::vector<Pt> pts;
    for (auto& p : s.at("points"))
      pts.push_back({p.at("n").get<double>(), p.at("seconds").get<double>(), !p.at("oversubscribed").get<bool>()});
    std::vector<double> tn, tt;
    for (auto& p : pts)
      if (p.timed && p.t > 0) tn.push_back(p.n), tt.push_back(p.t);
    nlohmann::json fit = {
        {"variant", s.at("variant")}, {"params", s.at("params")}, {"mode", mode}, {"axis", axis}, {"band", band}};
    const std::string variant = s.at("variant"), params = s.at("params");

    // Reference time: strong, T(1) measured or else fitted; weak, the smallest timed N.
    scaling::AmdahlFit am = scaling::fit_amdahl(tn, tt);
    double n0 = NAN, t0 = NAN;
    std::string ref_source;
    for (size_t i = 0; i < tn.size(); ++i)
      if (!(tn[i] >= n0)) n0 = tn[i], t0 = tt[i];
    if (strong && n0 != 1 && am.ok)
      n0 = 1, t0 = am.time_at(1), ref_source = "fitted T(1)";
    else
      ref_source = "measured";
    fit["reference"] = {{"n", num(n0)}, {"seconds", num(t0)}, {"source", ref_source}};

    std::vector<double> sn, ss, se;  // timed speedups and Karp-Flatt for the fits and trend
    nlohmann::json jp = nlohmann::json::array();
    for (auto& p : pts) {
      const double e_w = t0 / p.t;                       // weak efficiency T(N0)/T(N)
      const double sp_ = strong ? t0 / p.t : p.n * e_w;  // speedup or scaled speedup
      const double eff = sp_ / p.n;
      const double kf = scaling::karp_flatt(sp_, p.n);
      jp.push_back({{"n", p.n},
                    {"seconds", p.t},
                    {"timed", p.timed},
                    {"speedup", num(sp_)},
                    {"efficiency", num(eff)},
                    {"karp_flatt", num(kf)}});
      if (p.timed && std::isfinite(sp_)) sn.push_back(p.n), ss.push_back(sp_), se.push_back(kf);
    }
    fit["points"] = jp;

    // The law and its fitted f.
    double f = NAN;
    int dof = 0;
    const int timed = am.points;
    if (strong) {
      f = am.ok ? am.f : NAN;
      dof = am.ok ? am.points - 2 : 0;
      fit["amdahl"] = {{"t_serial", am.t_serial},
                       {"t_parallel", am.t_parallel},
                       {"f", num(f)},
                       {"rms_rel_residual", am.rms_rel_residual},
                       {"points", am.points},
                       {"dof", dof}};
    } else {
      std::vector<double> gn, gs;
      for (size_t i = 0; i < sn.size(); ++i)
        if (sn[i] > n0) gn.push_back(sn[i]), gs.push_back(ss[i]);
      f = scaling::fit_gustafson(gn, gs);
      dof = static_cast<int>(gn.size()) - 1;
      fit["gustafson"] = {{"f", num(f)}, {"points", gn.size() + 1}, {"dof", std::max(dof, 0)}};
      dof = std::max(dof, 0);
    }

    // The fitted law at every point (oversubscribed ones too, for comparison in the report).
    for (auto& p : fit["points"]) {
      const double n = p["n"].get<double>();
      const double law_s = !std::isfinite(f) ? NAN
                           : strong          ? scaling::amdahl_speedup(f, n)
                                             : scaling::gustafson_speedup(f, n);
      p["law_speedup"] = num(law_s);
      p["ratio_to_law"] = p["speedup"].is_number() ? num(p["speedup"].get<double>() / law_s) : nullptr;
    }

    // Karp-Flatt trend over the timed points; a change smaller than what a
    // relative timing error of `band` would cause, band / (S (1 - 1/N)), is "constant".
    double tol = 0;
    for (size_t i = 0; i < sn.size(); ++i)
      if (sn[i] > 1) tol = std::fmax(tol, band / (ss[i] * (1 - 1 / sn[i])));
    auto tr = scaling::karp_flatt_trend(sn, se, tol);
    fit["karp_flatt_trend"] = {{"slope", tr.slope}, {"change", tr.change}, {"tolerance", tol}, {"trend", tr.word}};

    // Point verdicts: measured speedup / law's speedup within [1 - band, 1 + band].
    int failed = 0, judged = 0;
    const std::string law = strong ? "Amdahl" : "Gustafson";
    for (size_t i = 0; i < sn.size(); ++i) {
      if (sn[i] <= n0 || !std::isfinite(f)) continue;
      Verdict v{tech, variant, params, (strong ? "speedup at " : "scaled speedup at ") + fmt("%g ", sn[i]) + axis, "x"};
      v.predicted = strong ? scaling::amdahl_speedup(f, sn[i]) : scaling::gustafson_speedup(f, sn[i]);
      v.measured = ss[i];
      v.ratio = v.measured / v.predicted;
      v.band_lo = 1 - band, v.band_hi = 1 + band;
      const bool inside = v.ratio >= v.band_lo && v.ratio <= v.band_hi;
      v.status = dof == 0 ? Status::info : inside ? Status::pass : Status::fail;
      failed += dof > 0 && !inside;
      ++judged;
      v.note = law + fmt(" f=%.4f; Karp-Flatt e=%.4f", f, se[i]);
      out.verdicts.push_back(v);
    }
    Verdict sv = series_verdict(tech, variant, params, law, f, band, timed, dof, judged, failed);
    sv.note += "; e(N) " + std::string(tr.word);
    fit["verdict"] = {{"status", to_string(sv.status)}, {"note", sv.note}};
    out.verdicts.push_back(sv);
    out.fits.push_back(fit);
  }
  return out;
}

}  // namespace sp
