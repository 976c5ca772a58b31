#pragma once
// The checks of lowbit_gemm's outputs (docs/compression.md derives each
// bound). Host copies of the inputs and of what the kernels built come in;
// every element is compared with its own bound.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/precision/lowbit_ref.hpp"
#include "reference/precision/quant_ref.hpp"
#include "scaleproof/compare.hpp"

namespace sp::precision::lowbit_check {

constexpr double kU = 0x1p-24;

// The GEMM problem in host memory: A (M x K) and W^T (N x K), row-major.
struct Problem {
  int M = 0, N = 0, K = 0;
  std::vector<float> a, wt;
};

// What the low-bit kernels produced, copied to the host.
struct Built {
  reference::LowbitRef scheme = reference::LowbitRef::uniform;
  int bits = 4, group = 1;
  std::vector<uint8_t> packed;           // N x K b/8 (uniform, log2)
  std::vector<uint64_t> wsigns, asigns;  // N x W, M x W (binary)
  std::vector<float> wscale;             // N x G (binary: alpha, N x 1)
  std::vector<int8_t> qa;                // M x K int8 activations (uniform, log2)
  std::vector<float> ascale;             // M (int8 scale per row, or beta)
  std::vector<float> c;                  // M x N result
};

// The exact product of A and W (long double) with sum |a||w| alongside.
inline void exact_product(const Problem& p, std::vector<long double>& c, std::vector<long double>& abs) {
  c.assign(size_t(p.M) * p.N, 0.0L), abs.assign(c.size(), 0.0L);
  for (int i = 0; i < p.M; ++i)
    for (int j = 0; j < p.N; ++j) {
      long double s = 0, t = 0;
      for (int k = 0; k < p.K; ++k) {
        const long double x = (long double)p.a[size_t(i) * p.K + k] * p.wt[size_t(j) * p.K + k];
        s += x, t += x < 0 ? -x : x;
      }
      c[size_t(i) * p.N + j] = s, abs[size_t(i) * p.N + j] = t;
    }
}

// Plain fp32 GEMM output: |C - AW| <= gamma_K sum |a||w| (Higham eq. 3.5).
inline CheckResult check_fp32(const Problem& p, const std::vector<float>& c) {
  std::vector<long double> ref, abs;
  exact_product(p, ref, abs);
  Comparator cmp("fp32 GEMM: |C - AW| <= gamma_K sum|a||w|");
  const double g = gamma_n(p.K, kU);
  for (size_t x = 0; x < c.size(); ++x) cmp.add(c[x], double(ref[x]), g * double(abs[x]));
  return cmp.result();
}

// Int8 per-channel GEMM (int8_gemm's bound): |x - q s| <= s (1/2 + 256u) per
// element, then sum |a| eb + ea |w| + ea eb, plus the rescale's 4u |C|.
inline CheckResult check_int8(const Problem& p, const std::vector<float>& sa, const std::vector<float>& sb,
                              const std::vector<float>& c) {
  std::vector<double> ea(size_t(p.M) * p.K), eb(size_t(p.K) * p.N);
  std::vector<float> b(size_t(p.K) * p.N);
  for (int i = 0; i < p.M; ++i)
    for (int k = 0; k < p.K; ++k) ea[size_t(i) * p.K + k] = sa[i] * (0.5 + 256 * kU);
  for (int k = 0; k < p.K; ++k)
    for (int j = 0; j < p.N; ++j) {
      eb[size_t(k) * p.N + j] = sb[j] * (0.5 + 256 * kU);
      b[size_t(k) * p.N + j] = p.wt[size_t(j) * p.K + k];
    }
  std::vector<long double> ref, bound;
  reference::quant_gemm_bound_ref(p.M, p.N, p.K, p.a, b, ea, eb, ref, bound);
  Comparator cmp("int8 per channel: sum|a|eb + ea|w| + ea eb + 4u|C|, e = s(1/2 + 256u)");
  for (size_t x = 0; x < c.size(); ++x) cmp.add(c[x], double(ref[x]), double(bound[x]) + 4 * kU * std::fabs(c[x]));
  return cmp.result();
}

// The low-bit variant, four ways:
// 1. codes: the packed fields (or sign bits) equal the reference quantizer's,
//    bitwise, and the scales equal its scales (alpha/beta: within gamma_(K+1));
// 2. dequantization: |x - x~| within the scheme's per-element bound;
// 3. integer pipeline: C within the fp32 rescale's rounding of the exact
//    sum_g (sa s_g) p_g (gamma_(G+2), the partial sums p_g are exact);
// 4. C within bound 3 plus the quantization bound of the fp32 inputs' product.
CheckResult check_lowbit(const Problem& p, const Built& b);

}  // namespace sp::precision::lowbit_check
