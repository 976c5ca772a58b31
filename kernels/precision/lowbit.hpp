#pragma once
// Weights below 8 bits (docs/compression.md). The weight matrix is held as
// W^T: one row of K inputs per output channel, rows cut into groups of
// `group` consecutive inputs that share one fp32 scale.
//
//  uniform (Jacob et al. 2018, grouped): b in {2, 4, 8} bits, symmetric
//    q = round(x / s) in [-Q, Q], Q = 2^(b-1) - 1, s = max|x| / Q per group;
//    codes in two's complement, 8/b per byte (int4: two per byte).
//  log2 (Miyashita et al. 2016): b in {2, 4} bits, sign + (b-1)-bit index m:
//    m = 0 is zero, m >= 1 is +-max|x| 2^-(m-1), chosen by rounding log2|x|
//    (midpoints at 2^(r - 1/2)); the integer weight is +-2^(L-m),
//    L = 2^(b-1) - 1 levels, with the group scale max|x| 2^-(L-1). At 4 bits
//    the integer weights are at most 64, so they multiply int8 activations
//    as a shift would; 8-bit codes would span 2^126 and are not offered.
//  binary (Rastegari et al. 2016, XNOR-Net): signs of weights and of
//    activations, one bit each (1 = x >= 0), 64 per word, with alpha = mean|w|
//    per output channel and beta = mean|a| per input row;
//    sum_k sgn(a) sgn(w) = K - 2 popcount(a xor w).
//
// Uniform and log2 weights multiply int8 activations (quantize.hpp, per
// row): each group's products are summed exactly in int32 and the group sum
// is rescaled into an fp32 accumulator, C_ij = sum_g (sa_i s_gj) p_gij.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>

#include "kernels/precision/quantize.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::precision {

enum class LowbitScheme { uniform, log2, binary };

// Quantized W^T (N rows of K). Uniform and log2 fill `packed` (N x K b/8)
// and `scale` (N x K/group); binary fills `signs` (N x ceil(K/64)) and
// `scale` (N x 1, alpha).
struct LowbitWeights {
  LowbitScheme scheme = LowbitScheme::uniform;
  int bits = 4, group = 1, K = 0;
  Kokkos::View<uint8_t**, Kokkos::LayoutRight> packed;
  Kokkos::View<uint64_t**, Kokkos::LayoutRight> signs;
  Kokkos::View<float**, Kokkos::LayoutRight> scale;
  // Bytes the weights occupy as built (codes or sign words, and scales).
  double bytes() const {
    return double(packed.span()) * sizeof(uint8_t) + double(signs.span()) * sizeof(uint64_t) +
           double(scale.span()) * sizeof(float);
  }
};

// Sign bits of rows and the mean |x| of each row (the binary operands).
struct BinaryRows {
  Kokkos::View<uint64_t**, Kokkos::LayoutRight> signs;
  Kokkos::View<float*> mean_abs;
};

constexpr float kSqrtHalf = 0.70710678f;  // log-domain rounding midpoint 2^(-1/2)

KOKKOS_INLINE_FUNCTION int lowbit_qmax(int bits) { return (1 << (bits - 1)) - 1; }

// Log2 index m of t = |x| / max|x| in [0, 1]: the first m with
// t >= 2^-(m-1) sqrt(1/2), or 0 (zero) when t is below all L of them.
KOKKOS_INLINE_FUNCTION int log2_index(float t, int levels) {
  float th = kSqrtHalf;
  for (int m = 1; m <= levels; ++m, th *= 0.5f)
    if (t >= th) return m;
  return 0;
}

// The signed integer a b-bit field stands for.
template <int BITS, bool LOG>
KOKKOS_INLINE_FUNCTION int decode(unsigned field) {
  if constexpr (LOG) {
    constexpr int L = (1 << (BITS - 1)) - 1;
    const int m = int(field & unsigned(L));
    const int mag = m == 0 ? 0 : (1 << (L - m));
    return (field >> (BITS - 1)) & 1u ? -mag : mag;
  } else {
    const int v = int(field & ((1u << BITS) - 1));
    return v >= (1 << (BITS - 1)) ? v - (1 << BITS) : v;  // two's complement
  }
}

KOKKOS_INLINE_FUNCTION int popcount64(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}

// Quantizes W^T (N x K) per group to `bits` bits, uniform or log2.
SP_UNIT_LOCAL inline LowbitWeights quantize_lowbit(const Mat<const float>& wt, LowbitScheme scheme, int bits,
                                                   int group) {
  require_finite(wt, "weights");
  const int N = int(wt.extent(0)), K = int(wt.extent(1)), G = K / group, per = 8 / bits;
  LowbitWeights w;
  w.scheme = scheme, w.bits = bits, w.group = group, w.K = K;
  w.packed = decltype(w.packed)("lowbit_packed", N, size_t(K) * bits / 8);
  w.scale = decltype(w.scale)("lowbit_scale", N, G);
  auto packed = w.packed;
  auto scale = w.scale;
  const bool log = scheme == LowbitScheme::log2;
  const int Q = lowbit_qmax(bits);  // uniform: largest code; log2: number of levels L
  Kokkos::parallel_for(
      "lowbit_quantize", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {N, G}),
      KOKKOS_LAMBDA(const int j, const int g) {
        float mx = 0;
        for (int k = g * group; k < (g + 1) * group; ++k) {
          const float a = wt(j, k) < 0 ? -wt(j, k) : wt(j, k);
          mx = a > mx ? a : mx;
        }
        // uniform: s = max/Q; log2: the unit of the integer weights, max 2^-(L-1) (exact).
        float s = mx / float(Q);
        if (log) {
          s = mx;
          for (int e = 0; e < Q - 1; ++e) s *= 0.5f;
        }
        scale(j, g) = s;
        for (int k = g * group; k < (g + 1) * group; k += per) {
          unsigned byte = 0;
          for (int t = 0; t < per; ++t) {
            const float x = wt(j, k + t);
            unsigned field;
            if (log) {
              const int m = mx > 0 ? log2_index((x < 0 ? -x : x) / mx, Q) : 0;
              field = unsigned(m) | (x < 0 && m > 0 ? 1u << (bits - 1) : 0u);
            } else {
              int r = s > 0 ? round_half_away(x / s) : 0;  // s = 0: an all-zero group
              r = r > Q ? Q : (r < -Q ? -Q : r);
              field = unsigned(r) & ((1u << bits) - 1);
            }
            byte |= field << (t * bits);
          }
          packed(j, k / per) = static_cast<uint8_t>(byte);
        }
      });
  return w;
}

// Sign bits (bit k%64 of word k/64 set when x >= 0; padding bits 0) and mean |x| of each row.
SP_UNIT_LOCAL inline BinaryRows binarize_rows(const Mat<const float>& x) {
  require_finite(x, "binary operand");
  const int R = int(x.extent(0)), K = int(x.extent(1)), W = (K + 63) / 64;
  BinaryRows b{decltype(b.signs)("binary_signs", R, W), Kokkos::View<float*>("binary_mean_abs", R)};
  auto signs = b.signs;
  auto mean = b.mean_abs;
  Kokkos::parallel_for(
      "binarize_rows", R, KOKKOS_LAMBDA(const int i) {
        float sum = 0;
        for (int w = 0; w < W; ++w) {
          uint64_t word = 0;
          for (int k = w * 64; k < K && k < (w + 1) * 64; ++k) {
            const float v = x(i, k);
            if (v >= 0) word |= uint64_t(1) << (k % 64);
            sum += v < 0 ? -v : v;
          }
          signs(i, w) = word;
        }
        mean(i) = sum / float(K);
      });
  return b;
}

inline LowbitWeights binarize_weights(const Mat<const float>& wt) {
  BinaryRows b = binarize_rows(wt);
  LowbitWeights w;
  w.scheme = LowbitScheme::binary, w.bits = 1, w.group = int(wt.extent(1)), w.K = int(wt.extent(1));
  w.signs = b.signs;
  w.scale = decltype(w.scale)("binary_alpha", wt.extent(0), 1);
  Kokkos::deep_copy(Kokkos::subview(w.scale, Kokkos::ALL, 0), b.mean_abs);
  return w;
}

// C (M x N) = A W with A int8 per row (qa) and W^T uniform or log2 packed.
// One work item per (block of MB rows, output channel j): the channel's
// codes are unpacked CH at a time into an int8 buffer that all MB rows then
// dot with their activations (contiguous int8 x int8 -> int32 loops).
template <int BITS, bool LOG>
SP_UNIT_LOCAL void gemm_lowbit_packed(const Quantized& qa, const LowbitWeights& w, const Mat<float>& C) {
  constexpr int MB = 8, PER = 8 / BITS, CH = 64;  // CH: codes per unpack, a multiple of PER
  const int M = int(C.extent(0)), N = int(C.extent(1)), group = w.group, G = w.K / group;
  auto a = qa.q;
  auto sa = qa.scale;
  auto packed = w.packed;
  auto scale = w.scale;
  Kokkos::parallel_for(
      "gemm_lowbit", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {(M + MB - 1) / MB, N}),
      KOKKOS_LAMBDA(const int ib, const int j) {
        const int i0 = ib * MB, rows = M - i0 < MB ? M - i0 : MB;
        float c[MB] = {};
        int8_t wb[CH];
        for (int g = 0; g < G; ++g) {
          int32_t p[MB] = {};
          for (int k0 = g * group; k0 < (g + 1) * group; k0 += CH) {
            const int len = (g + 1) * group - k0 < CH ? (g + 1) * group - k0 : CH;  // a multiple of PER
            for (int b = 0; b < len / PER; ++b) {
              const unsigned byte = packed(j, k0 / PER + b);
              for (int t = 0; t < PER; ++t)
                wb[b * PER + t] = static_cast<int8_t>(decode<BITS, LOG>(byte >> (t * BITS)));
            }
            for (int r = 0; r < rows; ++r) {
              const int8_t* ar = &a(i0 + r, k0);
              int32_t s = 0;
              for (int t = 0; t < len; ++t) s += int32_t(ar[t]) * int32_t(wb[t]);
              p[r] += s;
            }
          }
          for (int r = 0; r < rows; ++r) c[r] += (sa(i0 + r) * scale(j, g)) * static_cast<float>(p[r]);
        }
        for (int r = 0; r < rows; ++r) C(i0 + r, j) = c[r];
      });
}

// C_ij = (beta_i alpha_j) (K - 2 popcount(a_i xor w_j)).
SP_UNIT_LOCAL inline void gemm_xnor(const BinaryRows& a, const LowbitWeights& w, const Mat<float>& C) {
  const int M = int(C.extent(0)), N = int(C.extent(1)), K = w.K, W = int(w.signs.extent(1));
  auto as = a.signs;
  auto beta = a.mean_abs;
  auto ws = w.signs;
  auto alpha = w.scale;
  Kokkos::parallel_for(
      "gemm_xnor", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {M, N}), KOKKOS_LAMBDA(const int i, const int j) {
        int diff = 0;
        for (int x = 0; x < W; ++x) diff += popcount64(as(i, x) ^ ws(j, x));
        C(i, j) = (beta(i) * alpha(j, 0)) * static_cast<float>(K - 2 * diff);
      });
}

inline void gemm_lowbit(const Quantized& qa, const LowbitWeights& w, const Mat<float>& C) {
  const bool log = w.scheme == LowbitScheme::log2;
  if (log && w.bits == 2)
    gemm_lowbit_packed<2, true>(qa, w, C);
  else if (log && w.bits == 4)
    gemm_lowbit_packed<4, true>(qa, w, C);
  else if (!log && w.bits == 2)
    gemm_lowbit_packed<2, false>(qa, w, C);
  else if (!log && w.bits == 4)
    gemm_lowbit_packed<4, false>(qa, w, C);
  else if (!log && w.bits == 8)
    gemm_lowbit_packed<8, false>(qa, w, C);
  else
    throw sp::InputError("gemm_lowbit: no kernel for " + std::to_string(w.bits) + "-bit " + (log ? "log2" : "uniform") +
                         " weights");
}

}  // namespace sp::precision
