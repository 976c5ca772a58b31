#pragma once
// Scaling laws fitted to measured times (docs/SCALING.md, "Scaling
// laws"): Amdahl's T(N) = T_s + T_p/N by linear least squares in 1/N,
// Gustafson's scaled speedup S(N) = (1-f) + f N by least squares through
// S(1) = 1, and the Karp-Flatt experimentally determined serial fraction.
// Header-only and free of I/O so that the unit tests drive it directly.
#include <cmath>
#include <cstddef>
#include <vector>

namespace sp::scaling {

// Amdahl's speedup and Gustafson's scaled speedup for parallel fraction f.
inline double amdahl_speedup(double f, double n) { return 1.0 / ((1.0 - f) + f / n); }
inline double gustafson_speedup(double f, double n) { return (1.0 - f) + f * n; }

// Karp & Flatt (1990): e = (1/S - 1/N) / (1 - 1/N); undefined at N = 1.
inline double karp_flatt(double speedup, double n) { return n > 1 ? (1.0 / speedup - 1.0 / n) / (1.0 - 1.0 / n) : NAN; }

struct AmdahlFit {
  double t_serial = 0, t_parallel = 0;  // T(N) = t_serial + t_parallel / N
  double f = 0;                         // t_parallel / (t_serial + t_parallel)
  double rms_rel_residual = 0;          // sqrt(mean((T_fit/T - 1)^2)) over the fitted points
  int points = 0;                       // distinct N used
  bool ok = false;                      // needs >= 2 distinct N
  double time_at(double n) const { return t_serial + t_parallel / n; }
};

// Ordinary least squares of T on x = 1/N (docs/SCALING.md: the model is linear in 1/N).
inline AmdahlFit fit_amdahl(const std::vector<double>& n, const std::vector<double>& t) {
  AmdahlFit fit;
  const size_t m = n.size();
  if (m != t.size() || m < 2) return fit;
  double sx = 0, sy = 0;
  for (size_t i = 0; i < m; ++i) sx += 1.0 / n[i], sy += t[i];
  const double mx = sx / m, my = sy / m;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < m; ++i) {
    const double dx = 1.0 / n[i] - mx;
    sxx += dx * dx;
    sxy += dx * (t[i] - my);
  }
  if (sxx <= 0) return fit;  // all points at the same N
  fit.t_parallel = sxy / sxx;
  fit.t_serial = my - fit.t_parallel * mx;
  const double total = fit.t_serial + fit.t_parallel;
  fit.f = total > 0 ? fit.t_parallel / total : NAN;
  double r2 = 0;
  for (size_t i = 0; i < m; ++i) {
    const double r = fit.time_at(n[i]) / t[i] - 1.0;
    r2 += r * r;
  }
  fit.rms_rel_residual = std::sqrt(r2 / m);
  int distinct = 0;
  for (size_t i = 0; i < m; ++i) {
    bool seen = false;
    for (size_t j = 0; j < i; ++j) seen = seen || n[j] == n[i];
    distinct += !seen;
  }
  fit.points = distinct;
  fit.ok = true;
  return fit;
}

// Gustafson: S(N) - 1 = f (N - 1), least squares through the origin.
inline double fit_gustafson(const std::vector<double>& n, const std::vector<double>& s) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n.size() && i < s.size(); ++i) {
    num += (s[i] - 1.0) * (n[i] - 1.0);
    den += (n[i] - 1.0) * (n[i] - 1.0);
  }
  return den > 0 ? num / den : NAN;
}

// Trend of e(N) over N: its least-squares slope, and whether the change
// across the measured range exceeds `tolerance` (absolute, in units of e).
struct Trend {
  double slope = 0;                   // de/dN
  double change = 0;                  // slope x (N_max - N_min)
  const char* word = "undetermined";  // constant | growing | shrinking | undetermined (< 2 points)
};

inline Trend karp_flatt_trend(const std::vector<double>& n, const std::vector<double>& e, double tolerance) {
  Trend tr;
  std::vector<double> x, y;
  for (size_t i = 0; i < n.size() && i < e.size(); ++i)
    if (std::isfinite(e[i])) x.push_back(n[i]), y.push_back(e[i]);
  if (x.size() < 2) return tr;
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= x.size(), my /= y.size();
  double sxx = 0, sxy = 0, lo = x[0], hi = x[0];
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
    lo = std::fmin(lo, x[i]), hi = std::fmax(hi, x[i]);
  }
  if (sxx <= 0) return tr;
  tr.slope = sxy / sxx;
  tr.change = tr.slope * (hi - lo);
  tr.word = std::fabs(tr.change) <= tolerance ? "constant" : tr.change > 0 ? "growing" : "shrinking";
  return tr;
}

}  // namespace sp::scaling
