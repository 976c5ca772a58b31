#pragma once
// Single-rank reference of the hybrid step, in plain loops over values that
// carry their running error bound (eb.hpp), written independently of the
// Kokkos kernels: the whole model, the whole global batch at once, `steps`
// Adam steps from the same initial values (kernels/hybrid/model_init.hpp).
// Because every dot product is bounded for any order and split, the bound
// holds for every layout: tensor-parallel partial sums, pipeline
// micro-batches, data-parallel replicas, ZeRO's reduce-scatter and the
// recomputation of checkpointing (which repeats identical operations).
// Adam's update is also capped by 2 lr R_t (reference/dataparallel's
// adam_ratio_cap: |mhat| / sqrt(vhat) <= R_t for any gradient sequence).
#include <map>
#include <utility>
#include <vector>

#include "kernels/hybrid/layout.hpp"
#include "kernels/hybrid/model_init.hpp"
#include "reference/hybrid/eb.hpp"

namespace sp::hybrid::ref {

struct Matrix {
  int rows = 0, cols = 0;
  std::vector<E> a;
  Matrix() = default;
  Matrix(int r, int c) : rows(r), cols(c), a(size_t(r) * c) {}
  E& operator()(int i, int j) { return a[size_t(i) * cols + j]; }
  const E& operator()(int i, int j) const { return a[size_t(i) * cols + j]; }
};

// Parameters of the full model: (layer, tensor) -> matrix (LN vectors are 1 x h).
using Model = std::map<std::pair<int, Tensor>, Matrix>;

struct AdamConsts {
  double lr = 1e-2, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // as nn::AdamConfig's defaults
};

// The model after `steps` steps of a kernel computing in T (float or
// double: its constants rounded to T, its unit roundoff in every bound),
// each parameter with its bound.
template <class T>
Model train(const ModelShape& m, int steps, const AdamConsts& adam = {});

}  // namespace sp::hybrid::ref
