#include "db/regression.hpp"

#include <algorithm>

namespace sp::db {

TrendVerdict judge_trend(const std::vector<TrendPoint>& points, int window, double threshold) {
  TrendVerdict v;
  if (points.empty()) return v;
  const TrendPoint& last = points.back();
  v.machine = last.run.machine;
  std::vector<double> prev;
  for (auto it = points.rbegin() + 1; it != points.rend() && static_cast<int>(prev.size()) < window; ++it)
    if (it->run.machine == v.machine) prev.push_back(it->t.median);
  v.previous = static_cast<int>(prev.size());
  if (prev.empty()) return v;
  std::sort(prev.begin(), prev.end());
  const size_t n = prev.size();
  v.reference = n % 2 ? prev[n / 2] : 0.5 * (prev[n / 2 - 1] + prev[n / 2]);
  v.judged = v.reference > 0;
  if (!v.judged) return v;
  v.ratio = last.t.median / v.reference;
  v.regression = v.ratio > 1 + threshold;
  return v;
}

}  // namespace sp::db
