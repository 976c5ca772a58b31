#pragma once
// Reference checks for int8 quantization, plain loops in long double:
// the exact integer product of the quantized matrices and the analytical
// bound on |C - C_q| (C the product of the fp32 inputs) that follows from
// |x - q s| <= e_x per element:
//   |sum a b - sum (a - ea)(b - eb)| <= sum_k |a| eb + ea |b| + ea eb.
#include <cstdint>
#include <vector>

namespace sp::reference {

// acc_ij = sum_k qa_ik qb_kj in 64-bit integers (no overflow possible).
inline std::vector<int64_t> int_gemm_ref(int M, int N, int K, const std::vector<int8_t>& qa,
                                         const std::vector<int8_t>& qb) {
  std::vector<int64_t> c(size_t(M) * N, 0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      int64_t s = 0;
      for (int k = 0; k < K; ++k) s += int64_t(qa[size_t(i) * K + k]) * int64_t(qb[size_t(k) * N + j]);
      c[size_t(i) * N + j] = s;
    }
  return c;
}

// Exact product of the fp32 inputs and the quantization error bound per
// element, given per-element dequantization error bounds ea (M x K), eb (K x N).
inline void quant_gemm_bound_ref(int M, int N, int K, const std::vector<float>& a, const std::vector<float>& b,
                                 const std::vector<double>& ea, const std::vector<double>& eb,
                                 std::vector<long double>& c, std::vector<long double>& bound) {
  c.assign(size_t(M) * N, 0.0L);
  bound.assign(size_t(M) * N, 0.0L);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      long double s = 0, e = 0;
      for (int k = 0; k < K; ++k) {
        const long double x = a[size_t(i) * K + k], y = b[size_t(k) * N + j];
        const long double ex = ea[size_t(i) * K + k], ey = eb[size_t(k) * N + j];
        s += x * y;
        e += (x < 0 ? -x : x) * ey + ex * (y < 0 ? -y : y) + ex * ey;
      }
      c[size_t(i) * N + j] = s;
      bound[size_t(i) * N + j] = e;
    }
}

}  // namespace sp::reference
