#pragma once
// The regression problem the precision family trains on: inputs X, a fixed
// random teacher network producing targets Y, and a student MLP initialised
// with scaled uniform weights (He-like, 1/sqrt(fan_in)). Deterministic
// (fixed-seed LCG) so every run and every variant sees the same data.
#include <cmath>
#include <cstdint>
#include <vector>

namespace sp::precision {

struct MlpProblem {
  int B, D, H, O;
  std::vector<float> x, y, w1, w2;
};

inline MlpProblem make_mlp_problem(int B, int D, int H, int O, uint64_t seed = 12345) {
  uint64_t s = seed;
  auto uni = [&s] {  // uniform in [-1, 1)
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<float>(static_cast<double>(s >> 11) * 0x1p-53 * 2.0 - 1.0);
  };
  MlpProblem p{B, D, H, O, {}, {}, {}, {}};
  p.x.resize(size_t(B) * D);
  for (auto& v : p.x) v = uni();
  std::vector<float> t(size_t(D) * O);
  for (auto& v : t) v = uni() / std::sqrt(float(D));
  p.y.resize(size_t(B) * O);
  for (int b = 0; b < B; ++b)
    for (int o = 0; o < O; ++o) {
      double a = 0;
      for (int k = 0; k < D; ++k) a += double(p.x[b * D + k]) * t[k * O + o];
      p.y[b * O + o] = static_cast<float>(std::tanh(2 * a));
    }
  p.w1.resize(size_t(D) * H);
  for (auto& v : p.w1) v = uni() * std::sqrt(3.0f / float(D));
  p.w2.resize(size_t(H) * O);
  for (auto& v : p.w2) v = uni() * std::sqrt(3.0f / float(H));
  return p;
}

}  // namespace sp::precision
