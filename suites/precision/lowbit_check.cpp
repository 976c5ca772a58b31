#include "suites/precision/lowbit_check.hpp"

namespace sp::precision::lowbit_check {

using reference::LowbitRef;

CheckResult check_lowbit(const Problem& p, const Built& b) {
  const int M = p.M, N = p.N, K = p.K;
  const bool bin = b.scheme == LowbitRef::binary;
  const int G = bin ? 1 : K / b.group, W = (K + 63) / 64;
  // Dequantized operands as the kernel holds them, with per-element error bounds.
  std::vector<double> wq(size_t(N) * K), ew(wq.size()), aq(size_t(M) * K), ea(aq.size());
  std::vector<int> wcode;  // integer weights of the reference quantizer (uniform, log2)
  Comparator codes("codes and scales == reference quantizer (bitwise; alpha, beta within gamma_(K+1))");
  Comparator deq("|x - x~| <= the scheme's per-element bound (lowbit_ref.hpp)");
  if (bin) {
    const auto alpha = reference::mean_abs_ref(p.wt, N, K), beta = reference::mean_abs_ref(p.a, M, K);
    const double g = gamma_n(K + 1, kU);
    auto signs = [&](const std::vector<uint64_t>& words, const std::vector<float>& x, int rows,
                     const std::vector<float>& scale, const std::vector<long double>& want, std::vector<double>& q,
                     std::vector<double>& e) {
      for (int r = 0; r < rows; ++r) {
        codes.add(scale[r], double(want[r]), g * double(want[r]));
        for (int k = 0; k < W * 64; ++k) {
          const bool bit = reference::sign_bit_ref(&words[size_t(r) * W], k);
          if (k >= K) {  // padding must be 0 in both operands: it then adds nothing to popcount(a xor w)
            codes.add(bit, 0, 0);
            continue;
          }
          const float v = x[size_t(r) * K + k];
          codes.add(bit, v >= 0, 0);
          q[size_t(r) * K + k] = bit ? scale[r] : -double(scale[r]);
          e[size_t(r) * K + k] = std::fabs(std::fabs(double(v)) - scale[r]);  // exact: ||x| - alpha|
        }
      }
    };
    signs(b.wsigns, p.wt, N, b.wscale, alpha, wq, ew);
    signs(b.asigns, p.a, M, b.ascale, beta, aq, ea);
  } else {
    std::vector<float> scale;
    reference::lowbit_codes_ref(p.wt, N, K, b.scheme, b.bits, b.group, wcode, scale);
    const size_t row_bytes = size_t(K) * b.bits / 8;
    for (int j = 0; j < N; ++j) {
      const auto got = reference::unpack_row_ref(&b.packed[j * row_bytes], K, b.scheme, b.bits);
      for (int g = 0; g < G; ++g) {
        const size_t s = size_t(j) * G + g;
        codes.add(b.wscale[s], scale[s], 0);
        double mx = 0;
        for (int k = g * b.group; k < (g + 1) * b.group; ++k) mx = std::fmax(mx, std::fabs(p.wt[size_t(j) * K + k]));
        for (int k = g * b.group; k < (g + 1) * b.group; ++k) {
          const size_t x = size_t(j) * K + k;
          codes.add(got[k], wcode[x], 0);
          wq[x] = double(got[k]) * b.wscale[s];
          ew[x] = reference::lowbit_dequant_bound_ref(b.scheme, b.bits, p.wt[x], mx, b.wscale[s]);
          deq.add(wq[x], p.wt[x], ew[x]);
        }
      }
    }
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k) {
        const size_t x = size_t(i) * K + k;
        aq[x] = double(b.qa[x]) * b.ascale[i];
        ea[x] = b.ascale[i] * (0.5 + 256 * kU);  // int8: s (1/2 + 2(Q+1)u), Q = 127
        deq.add(aq[x], p.a[x], ea[x]);
      }
  }
  Comparator ints(bin ? "|C - beta alpha (K - 2 popcount)| <= gamma_2 |C| (exact integer dot)"
                      : "|C - sum_g sa s_g p_g| <= gamma_(G+2) sum_g |sa s_g p_g| (exact int32 p_g)");
  Comparator quant("|C - AW| <= sum|a| ew + ea |w| + ea ew + the rescale bound");
  std::vector<long double> ref, abs;
  exact_product(p, ref, abs);
  const double gG = gamma_n(G + 2, kU), g2 = gamma_n(2, kU);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      long double want = 0, mag = 0, qerr = 0;
      for (int g = 0; g < G; ++g) {
        long double part = 0;
        const int k0 = bin ? 0 : g * b.group, k1 = bin ? K : (g + 1) * b.group;
        for (int k = k0; k < k1; ++k) {
          const size_t xa = size_t(i) * K + k, xw = size_t(j) * K + k;
          part += bin ? ((p.a[xa] >= 0) == (p.wt[xw] >= 0) ? 1 : -1) : (long double)b.qa[xa] * wcode[xw];
          qerr +=
              std::fabs((long double)p.a[xa]) * ew[xw] + ea[xa] * std::fabs((long double)p.wt[xw]) + ea[xa] * ew[xw];
        }
        const long double unit = bin ? (long double)(float)(b.ascale[i] * b.wscale[j])
                                     : (long double)b.ascale[i] * b.wscale[size_t(j) * G + g];
        want += unit * part;
        mag += std::fabs(unit * part);
      }
      const double c = b.c[size_t(i) * N + j];
      // binary: fl(fl(beta alpha) dot), the product rounded once beyond the exact fl(beta alpha) dot.
      const double rescale = bin ? g2 * double(std::fabs(want)) : gG * double(mag);
      ints.add(c, double(want), rescale);
      quant.add(c, double(ref[size_t(i) * N + j]), double(qerr) + rescale + (bin ? 2 * kU * double(mag) : 0));
    }
  CheckResult r = codes.result();
  if (!bin) r.merge(deq.result());
  r.merge(ints.result());
  r.merge(quant.result());
  return r;
}

}  // namespace sp::precision::lowbit_check
