#pragma once
// The initial parameters, the inputs and the targets of the step, as pure
// functions of their global position, so that every rank can fill its own
// slice and the single-rank reference the whole model with the same values
// (rounded once into fp32, the type both start from).
//   weights: uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)] (fan_in = rows);
//   LN gamma in [0.9, 1.1], beta in [-0.1, 0.1];
//   inputs uniform in [-1, 1], targets uniform in [-0.5, 0.5].
#include <cmath>
#include <cstdint>

namespace sp::hybrid {

enum class Tensor : int { ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, w1, w2, input, target };

// A value in [-1, 1) from a 64-bit mix (SplitMix64's finalizer) of the position.
inline double unit_hash(int layer, Tensor t, int64_t i, int64_t j) {
  uint64_t x = (uint64_t(uint32_t(layer)) << 40) ^ (uint64_t(int(t)) << 56) ^ (uint64_t(i) << 20) ^ uint64_t(j);
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return double(x >> 11) * 0x1p-52 - 1.0;
}

// Element (i, j) of tensor t of global layer `layer` ([rows, cols] as stored
// in the full model: wq/wk/wv/wo [h, h], w1 [h, f], w2 [f, h], LN vectors [1, h]).
inline float init_value(int layer, Tensor t, int64_t i, int64_t j, int rows) {
  const double r = unit_hash(layer, t, i, j);
  switch (t) {
    case Tensor::ln1_g:
    case Tensor::ln2_g: return float(1.0 + 0.1 * r);
    case Tensor::ln1_b:
    case Tensor::ln2_b: return float(0.1 * r);
    case Tensor::input: return float(r);
    case Tensor::target: return float(0.5 * r);
    default: return float(r / std::sqrt(double(rows)));
  }
}

}  // namespace sp::hybrid
