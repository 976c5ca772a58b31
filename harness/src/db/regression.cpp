#include "db/regression.hpp"

#include <algorithm>

namespace sp::db {

TrendVerdict judge_trend(const std::vector<TrendPoint>& points, int window, double threshold) {
  TrendVerdict v;
  if (points.empty()) return v;
  const TrendPoint& last = points.back();
  v.machine = last.run.machine;
  std::vector<const TrendPoint*> window_points;
  for (auto it = points.rbegin() + 1; it != points.rend() && static_cast<int>(window_points.size()) < window; ++it)
    if (it->run.machine == v.machine) window_points.push_back(&*it);
  v.previous = static_cast<int>(window_points.size());
  if (window_points.empty()) return v;
  v.calls = last.t.calls &&
            std::all_of(window_points.begin(), window_points.end(), [](const TrendPoint* p) { return p->t.calls; });
  auto figure = [&](const TrendPoint& p) { return v.calls ? p.t.call_median : p.t.median; };
  std::vector<double> prev;
  for (auto* p : window_points) prev.push_back(figure(*p));
  v.last = figure(last);
  std::sort(prev.begin(), prev.end());
  const size_t n = prev.size();
  v.reference = n % 2 ? prev[n / 2] : 0.5 * (prev[n / 2 - 1] + prev[n / 2]);
  v.judged = v.reference > 0;
  if (!v.judged) return v;
  v.ratio = v.last / v.reference;
  v.regression = v.ratio > 1 + threshold;
  return v;
}

}  // namespace sp::db
