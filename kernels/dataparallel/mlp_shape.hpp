#pragma once
// Shape of the multi-layer perceptron the data-parallel techniques train, and
// the layout of its flat parameter vector, shared by the Kokkos trainer and
// the plain-loop reference.
//
// dims = {in, width x depth, out}: layer l (1..L) maps dims[l-1] -> dims[l].
// Its parameter block is W_l (dims[l] x dims[l-1], row-major) then b_l
// (dims[l]); blocks are stored layer after layer. Hidden layers apply GeLU
// (tanh form, Hendrycks & Gimpel 2016); the last is linear. The loss is
// L = 1/(2B) sum_b |y_b - t_b|^2 over the global batch B.
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/nn/optim.hpp"
#include "kernels/nn/activations.hpp"

namespace sp::dp {

struct MlpShape {
  std::vector<int> dims;

  static MlpShape make(int in, int width, int depth, int out) {
    MlpShape s;
    s.dims.push_back(in);
    for (int i = 0; i < depth; ++i) s.dims.push_back(width);
    s.dims.push_back(out);
    return s;
  }
  int layers() const { return static_cast<int>(dims.size()) - 1; }
  int in(int l) const { return dims[l - 1]; }
  int out(int l) const { return dims[l]; }
  size_t block_size(int l) const { return static_cast<size_t>(dims[l]) * dims[l - 1] + dims[l]; }
  size_t block_offset(int l) const {
    size_t o = 0;
    for (int k = 1; k < l; ++k) o += block_size(k);
    return o;
  }
  size_t n_params() const { return block_offset(layers() + 1); }
  size_t min_block() const {
    size_t m = block_size(1);
    for (int l = 2; l <= layers(); ++l) m = block_size(l) < m ? block_size(l) : m;
    return m;
  }
  size_t max_block() const {
    size_t m = 0;
    for (int l = 1; l <= layers(); ++l) m = block_size(l) > m ? block_size(l) : m;
    return m;
  }
  // DDP's gradient buckets (PyTorch's bucket_cap_mb): consecutive layers taken
  // in the order backward produces them (last layer first) while the bucket
  // stays within cap elements; a layer above the cap is a bucket alone; cap 0
  // gives one bucket per layer. A bucket {lo, hi} is the contiguous parameter
  // range of layers lo..hi, ready once layer lo's gradient is.
  struct Bucket {
    int lo, hi;
  };
  std::vector<Bucket> buckets(size_t cap) const {
    std::vector<Bucket> out;
    for (int l = layers(); l >= 1; --l) {
      if (!out.empty() && cap > 0 && block_offset(out.back().hi + 1) - block_offset(l) <= cap)
        out.back().lo = l;
      else
        out.push_back({l, l});
    }
    return out;
  }
  // Multiply-adds of one sample's forward pass; backward costs twice that (dW and dA).
  double macs_per_sample() const {
    double m = 0;
    for (int l = 1; l <= layers(); ++l) m += static_cast<double>(dims[l]) * dims[l - 1];
    return m;
  }
};

// GeLU constants of the tanh form: gelu(z) = z/2 (1 + tanh(k (z + c z^3))).
constexpr double kGeluK = sp::nn::kGeluK;  // sqrt(2/pi)
constexpr double kGeluC = sp::nn::kGeluC;

// Adam (Kingma & Ba 2015) hyper-parameters (kernels/nn/optim.hpp).
using sp::nn::AdamConfig;

// Deterministic inputs (identical on every rank and in the reference):
// parameters ~ U(-1,1)/sqrt(fan_in), inputs and targets in [-1, 1].
inline double dp_hash_unit(uint64_t i, uint64_t salt) {
  uint64_t x = i * 0x9E3779B97F4A7C15ull + salt * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31, x *= 0x94D049BB133111EBull, x ^= x >> 29;
  return static_cast<double>(x >> 11) * 0x1p-53 * 2 - 1;
}

template <class T>
std::vector<T> initial_params(const MlpShape& s) {
  std::vector<T> p(s.n_params());
  for (int l = 1; l <= s.layers(); ++l) {
    const size_t o = s.block_offset(l);
    const double scale = 1.0 / std::sqrt(static_cast<double>(s.in(l)));
    for (size_t i = 0; i < s.block_size(l); ++i) p[o + i] = static_cast<T>(dp_hash_unit(o + i, 1) * scale);
  }
  return p;
}

template <class T>
std::vector<T> batch_inputs(const MlpShape& s, int batch) {
  std::vector<T> x(static_cast<size_t>(batch) * s.dims.front());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(dp_hash_unit(i, 2));
  return x;
}

template <class T>
std::vector<T> batch_targets(const MlpShape& s, int batch) {
  std::vector<T> t(static_cast<size_t>(batch) * s.dims.back());
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<T>(dp_hash_unit(i, 3));
  return t;
}

}  // namespace sp::dp
