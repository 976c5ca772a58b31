#pragma once
// Pruning (the companion to quantization): unstructured magnitude
// pruning of a weight matrix W (M x K) to CSR with a CSR x dense kernel, and
// structured (output-channel) pruning to a smaller dense matrix that the
// ordinary dense GEMM then multiplies.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>
#include "scaleproof/kokkos_compat.hpp"

namespace sp::precision {

// Number of weights kept at a sparsity s in [0, 1): round((1 - s) * count).
inline int64_t kept_count(int64_t count, double sparsity) {
  return static_cast<int64_t>(std::llround((1.0 - sparsity) * double(count)));
}

struct Csr {
  int rows = 0, cols = 0;
  Kokkos::View<int*> row_ptr, col;
  Kokkos::View<float*> val;
  int64_t nnz() const { return int64_t(val.extent(0)); }
};

// Keeps the `keep` largest |w| (ties: the lower index), the rest become zero.
// Returns the keep mask (host), built with a partial selection.
inline std::vector<char> magnitude_mask(const std::vector<float>& w, int64_t keep) {
  std::vector<int64_t> idx(w.size());
  std::iota(idx.begin(), idx.end(), 0);
  auto larger = [&w](int64_t a, int64_t b) {
    const float fa = std::fabs(w[a]), fb = std::fabs(w[b]);
    return fa > fb || (fa == fb && a < b);
  };
  if (keep < int64_t(w.size())) std::nth_element(idx.begin(), idx.begin() + keep, idx.end(), larger);
  std::vector<char> mask(w.size(), 0);
  for (int64_t i = 0; i < keep; ++i) mask[idx[i]] = 1;
  return mask;
}

inline Csr to_csr(const std::vector<float>& w, const std::vector<char>& mask, int M, int K) {
  Csr c;
  c.rows = M, c.cols = K;
  std::vector<int> rp(M + 1, 0), col;
  std::vector<float> val;
  for (int i = 0; i < M; ++i) {
    for (int k = 0; k < K; ++k)
      if (mask[size_t(i) * K + k]) col.push_back(k), val.push_back(w[size_t(i) * K + k]);
    rp[i + 1] = int(col.size());
  }
  c.row_ptr = Kokkos::View<int*>("row_ptr", M + 1);
  c.col = Kokkos::View<int*>("col", col.size());
  c.val = Kokkos::View<float*>("val", val.size());
  Kokkos::deep_copy(c.row_ptr, Kokkos::View<const int*, Kokkos::HostSpace>(rp.data(), rp.size()));
  Kokkos::deep_copy(c.col, Kokkos::View<const int*, Kokkos::HostSpace>(col.data(), col.size()));
  Kokkos::deep_copy(c.val, Kokkos::View<const float*, Kokkos::HostSpace>(val.data(), val.size()));
  return c;
}

// Y = W X with W in CSR: one row of Y per work item, accumulated in place
// while the rows of X selected by the row's nonzeros stream past (contiguous
// inner loop over the N columns).
SP_UNIT_LOCAL inline void spmm_csr(const Csr& w, Kokkos::View<const float**, Kokkos::LayoutRight> X,
                                   Kokkos::View<float**, Kokkos::LayoutRight> Y) {
  auto rp = w.row_ptr;
  auto col = w.col;
  auto val = w.val;
  const int N = int(X.extent(1));
  Kokkos::parallel_for(
      "spmm_csr", w.rows, KOKKOS_LAMBDA(const int i) {
        float* y = &Y(i, 0);
        for (int j = 0; j < N; ++j) y[j] = 0;
        for (int p = rp(i); p < rp(i + 1); ++p) {
          const float a = val(p);
          const float* x = &X(col(p), 0);
          for (int j = 0; j < N; ++j) y[j] += a * x[j];
        }
      });
}

// Structured pruning: keep the `keep` rows (output channels) of largest L2
// norm, in their original order.
inline std::vector<int> channel_keep(const std::vector<float>& w, int M, int K, int keep) {
  std::vector<double> norm(M, 0);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) norm[i] += double(w[size_t(i) * K + k]) * w[size_t(i) * K + k];
  std::vector<int> idx(M);
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return norm[a] > norm[b]; });
  idx.resize(keep);
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace sp::precision
