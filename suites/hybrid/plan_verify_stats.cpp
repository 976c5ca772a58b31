// The verification's pure parts: which layouts, the statistics, the shape.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "suites/hybrid/plan_verify.hpp"

namespace sp::hybrid::plan {

std::vector<int> pick_verified(int n, int k) {
  std::vector<int> idx;
  for (int i = 0; i < std::min(n, k); ++i) idx.push_back(i);
  const int rest = n - k;  // positions k..n-1
  if (rest <= 0) return idx;
  if (rest <= k) {
    for (int i = k; i < n; ++i) idx.push_back(i);
    return idx;
  }
  if (k == 1) {
    idx.push_back(k + (rest - 1) / 2);
  } else {
    for (int j = 0; j < k; ++j)
      idx.push_back(k + static_cast<int>(std::lround(static_cast<double>(j) * (rest - 1) / (k - 1))));
  }
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  return idx;
}

namespace {

std::vector<double> ranks_of(const std::vector<double>& x) {
  std::vector<int> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;  // ranks i+1..j+1
    for (size_t q = i; q <= j; ++q) r[order[q]] = avg;
    i = j + 1;
  }
  return r;
}

}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return NAN;
  const auto ra = ranks_of(a), rb = ranks_of(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (saa == 0 || sbb == 0) return NAN;
  return sab / std::sqrt(saa * sbb);
}

double mean_abs_rel_error(const std::vector<double>& predicted, const std::vector<double>& measured) {
  double s = 0;
  for (size_t i = 0; i < predicted.size(); ++i) s += std::fabs(predicted[i] - measured[i]) / measured[i];
  return predicted.empty() ? NAN : s / static_cast<double>(predicted.size());
}

ModelShape scale_down(int ranks) {
  ModelShape m;
  m.heads = 2 * ranks;
  m.hidden = 32 * m.heads;
  m.layers = 8;
  m.seq = 64;
  m.ffn = 0;
  m.vocab = 0;
  m.global_batch = 8 * ranks;
  return m;
}

}  // namespace sp::hybrid::plan
