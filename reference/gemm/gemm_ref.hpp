#pragma once
// Reference GEMM: the textbook triple loop, C = A * B with row-major inputs,
// accumulated in long double. Also returns (|A| |B|)_ij, the magnitude the
// rounding-error bound of any summation order scales with.
#include <cstdint>
#include <vector>

namespace sp::reference {

template <class T>
void gemm_ref(int64_t M, int64_t N, int64_t K, const std::vector<T>& A, const std::vector<T>& B,
              std::vector<long double>& C, std::vector<long double>& absAB) {
  C.assign(M * N, 0.0L);
  absAB.assign(M * N, 0.0L);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      long double s = 0, sa = 0;
      for (int64_t k = 0; k < K; ++k) {
        const long double p = static_cast<long double>(A[i * K + k]) * static_cast<long double>(B[k * N + j]);
        s += p;
        sa += p < 0 ? -p : p;
      }
      C[i * N + j] = s;
      absAB[i * N + j] = sa;
    }
}

}  // namespace sp::reference
