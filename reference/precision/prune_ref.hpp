#pragma once
// Reference pruning and product, plain loops: the magnitude mask by a full
// sort (the kernel uses a partial selection), and Y = W X of the pruned
// matrix in long double with sum |w||x| for the rounding bound.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace sp::reference {

inline std::vector<char> magnitude_mask_ref(const std::vector<float>& w, int64_t keep) {
  std::vector<std::pair<float, int64_t>> v;
  for (int64_t i = 0; i < int64_t(w.size()); ++i) v.push_back({std::fabs(w[i]), i});
  std::sort(v.begin(), v.end(),
            [](auto& a, auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  std::vector<char> mask(w.size(), 0);
  for (int64_t i = 0; i < keep; ++i) mask[v[i].second] = 1;
  return mask;
}

// Rows `rows` of (W .* mask) X, W M x K, X K x N.
inline void pruned_gemm_ref(int K, int N, const std::vector<float>& w, const std::vector<char>& mask,
                            const std::vector<float>& x, const std::vector<int>& rows, std::vector<long double>& y,
                            std::vector<long double>& absy) {
  y.assign(rows.size() * size_t(N), 0.0L);
  absy.assign(y.size(), 0.0L);
  for (size_t r = 0; r < rows.size(); ++r)
    for (int j = 0; j < N; ++j) {
      long double s = 0, a = 0;
      for (int k = 0; k < K; ++k) {
        const size_t e = size_t(rows[r]) * K + k;
        if (!mask[e]) continue;
        const long double p = (long double)w[e] * x[size_t(k) * N + j];
        s += p, a += p < 0 ? -p : p;
      }
      y[r * N + j] = s, absy[r * N + j] = a;
    }
}

}  // namespace sp::reference
