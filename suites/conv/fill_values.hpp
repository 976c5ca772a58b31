#pragma once
// The convolution family's deterministic test data: inputs, weights and
// biases of every variant and of the kernel tests come from here, so that a
// kernel and its reference always see the same values.
#include <cmath>
#include <cstdint>
#include <vector>

namespace sp::conv {

// Deterministic inputs with mixed signs, scaled by 1/sqrt(scale_by) so that
// activations stay O(1) through stacked layers.
template <class T>
std::vector<T> fill_values(int64_t count, uint64_t seed, double scale_by) {
  std::vector<T> v(count);
  const double k = 1.0 / std::sqrt(scale_by);
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t h = (uint64_t(i) + 1) * 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull);
    v[i] = static_cast<T>(((static_cast<int>((h >> 33) % 201)) - 100) / 100.0 * k);
  }
  return v;
}

}  // namespace sp::conv
