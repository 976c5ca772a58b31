#pragma once
// Reference for the low-bit weight schemes (kernels/precision/lowbit.hpp,
// docs/compression.md), plain loops: the codes each scheme must produce,
// the bytes it must pack them into, the dequantized values and the error
// bound each element's dequantization must meet. Rows are output channels
// of W^T (R x K), cut into groups of `group` inputs.
//
// Per-element dequantization bounds (u = 2^-24, fp32 arithmetic):
//  uniform, Q = 2^(b-1)-1, s = fl(max/Q): q = round(fl(x/s)) and
//    |x/s - fl(x/s)| <= u |x/s| <= u Q (1 + 2u), so |x - q s| <= s (1/2 + 2(Q+1)u).
//  log2, L levels of max 2^-(m-1): |x| between two midpoints 2^(r -+ 1/2)
//    (each known to a few u) lands on 2^r, so |x - x~| <= (sqrt2 - 1 + 8u)|x|;
//    below the last midpoint x~ = 0 and |x - x~| = |x| < max 2^-(L-1) sqrt(1/2)(1 + 8u).
//  binary: x~ = alpha sgn(x), so |x - x~| = ||x| - alpha| exactly.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace sp::reference {

enum class LowbitRef { uniform, log2, binary };

inline int lowbit_levels_ref(int bits) { return (1 << (bits - 1)) - 1; }

// Log2 index m in 1..L of t = |x| / max|x| (level 2^-(m-1), rounded in the
// log domain at midpoints 2^-(m-1) sqrt(1/2)), or 0 below the last midpoint.
inline int log2_index_ref(float t, int L) {
  for (int m = 1; m <= L; ++m)
    if (t >= std::ldexp(std::sqrt(0.5f), -(m - 1))) return m;
  return 0;
}

// Integer weight of every element and the scale of every group (the unit
// the integers are in): uniform q and max/Q; log2 (bits <= 4) +-2^(L-m) and max 2^-(L-1).
inline void lowbit_codes_ref(const std::vector<float>& wt, int R, int K, LowbitRef scheme, int bits, int group,
                             std::vector<int>& codes, std::vector<float>& scales) {
  const int G = K / group, L = lowbit_levels_ref(bits);
  codes.assign(size_t(R) * K, 0);
  scales.assign(size_t(R) * G, 0.0f);
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < G; ++g) {
      float mx = 0;
      for (int k = g * group; k < (g + 1) * group; ++k) mx = std::fmax(mx, std::fabs(wt[size_t(r) * K + k]));
      const float s = scheme == LowbitRef::uniform ? mx / float(L) : std::ldexp(mx, -(L - 1));
      scales[size_t(r) * G + g] = s;
      for (int k = g * group; k < (g + 1) * group; ++k) {
        const float x = wt[size_t(r) * K + k];
        int v = 0;
        if (scheme == LowbitRef::uniform) {
          if (s > 0) v = int(std::lround(x / s));
          v = std::max(-L, std::min(L, v));
        } else if (mx > 0) {
          const int m = log2_index_ref(std::fabs(x) / mx, L);
          v = m == 0 ? 0 : (x < 0 ? -1 : 1) * (1 << (L - m));
        }
        codes[size_t(r) * K + k] = v;
      }
    }
}

// The integer weights stored in a packed row: 8/b fields per byte, field
// t of a byte in bits [t b, (t+1) b).
inline std::vector<int> unpack_row_ref(const uint8_t* bytes, int K, LowbitRef scheme, int bits) {
  const int per = 8 / bits, L = lowbit_levels_ref(bits);
  std::vector<int> out(K);
  for (int k = 0; k < K; ++k) {
    const int field = (bytes[k / per] >> (bits * (k % per))) & ((1 << bits) - 1);
    if (scheme == LowbitRef::uniform) {
      out[k] = field >= (1 << (bits - 1)) ? field - (1 << bits) : field;
    } else {
      const int m = field & L, neg = field >> (bits - 1);
      out[k] = m == 0 ? 0 : (neg ? -1 : 1) * (1 << (L - m));
    }
  }
  return out;
}

// Bound on |x - x~| for one element (see the header), given its group's max |x| and scale.
inline double lowbit_dequant_bound_ref(LowbitRef scheme, int bits, double x, double group_max, double scale) {
  const double u = 0x1p-24;
  if (scheme == LowbitRef::uniform) return scale * (0.5 + 2 * (lowbit_levels_ref(bits) + 1) * u);
  const double ax = std::fabs(x);
  const double zero_below = group_max * std::ldexp(std::sqrt(0.5), -(lowbit_levels_ref(bits) - 1)) * (1 + 8 * u);
  return std::max((std::sqrt(2.0) - 1 + 8 * u) * ax, std::min(ax, zero_below));
}

// Sign bits (x >= 0) of element k of a row of 64-bit words.
inline bool sign_bit_ref(const uint64_t* words, int k) { return (words[k / 64] >> (k % 64)) & 1u; }

// mean |x| of each row, in long double.
inline std::vector<long double> mean_abs_ref(const std::vector<float>& x, int R, int K) {
  std::vector<long double> m(R, 0.0L);
  for (int r = 0; r < R; ++r) {
    for (int k = 0; k < K; ++k) m[r] += std::fabs((long double)x[size_t(r) * K + k]);
    m[r] /= K;
  }
  return m;
}

// Dequantized weights in double, for error curves: every scheme at any
// bits in {1, 2, 4, 8} (1 = binary, alpha per row).
inline std::vector<double> fake_quant_ref(const std::vector<float>& x, int R, int K, LowbitRef scheme, int bits,
                                          int group) {
  std::vector<double> out(x.size());
  if (scheme == LowbitRef::binary) {
    const auto m = mean_abs_ref(x, R, K);
    for (int r = 0; r < R; ++r)
      for (int k = 0; k < K; ++k) out[size_t(r) * K + k] = x[size_t(r) * K + k] >= 0 ? double(m[r]) : -double(m[r]);
    return out;
  }
  const int L = lowbit_levels_ref(bits);
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < K / group; ++g) {
      const size_t k0 = size_t(r) * K + size_t(g) * group;
      float mx = 0;
      for (int k = 0; k < group; ++k) mx = std::fmax(mx, std::fabs(x[k0 + k]));
      for (int k = 0; k < group; ++k) {
        const float v = x[k0 + k];
        double q = 0;
        if (scheme == LowbitRef::uniform) {
          const float s = mx / float(L);
          q = s > 0 ? std::max(-L, std::min(L, int(std::lround(v / s)))) * double(s) : 0.0;
        } else if (mx > 0) {
          const int m = log2_index_ref(std::fabs(v) / mx, L);
          q = m == 0 ? 0.0 : std::copysign(std::ldexp(double(mx), -(m - 1)), double(v));
        }
        out[k0 + k] = q;
      }
    }
  return out;
}

}  // namespace sp::reference
