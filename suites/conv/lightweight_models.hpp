#pragma once
// Closed forms of docs/conv.md, section "Lightweight convolution":
// parameter counts, multiply-adds and receptive fields of the structures the
// composite blocks compare. These are the predictions; the measurements are
// counted from the built layers (NetExec::params_allocated, Net::conv_macs,
// the receptive field composed layer by layer in Net::conv).
#include <cmath>

namespace sp::conv::models {

// Standard k_h x k_w conv, C_in -> C_out, g groups: k_h k_w C_in C_out / g
// weights (docs/conv.md table rows 1-2), + C_out with a bias.
inline double conv_params(double kh, double kw, double cin, double cout, double g = 1, bool bias = false) {
  return kh * kw * cin * cout / g + (bias ? cout : 0);
}
// Its multiply-adds per output pixel: the same as its weight count (rows 1-2).
inline double conv_macs_per_pixel(double kh, double kw, double cin, double cout, double g = 1) {
  return kh * kw * cin * cout / g;
}

// n stacked k x k layers, C -> C: n k^2 C^2 (VGG 2.3: 3 x 3x3 = 27 C^2 vs
// one 7x7 = 49 C^2); with biases n (k^2 C + 1) C (3 (3*3+1) per
// channel pair vs 7*7+1).
inline double stacked_params(int n, int k, double c, bool bias = false) {
  return n * (double(k) * k * c * c + (bias ? c : 0));
}

// Receptive field of n stacked k x k stride-1 layers: 1 + n (k - 1) (VGG 2.3).
inline int receptive_field(int n, int k) { return 1 + n * (k - 1); }

// 1 x n then n x 1 instead of n x n: 2n instead of n^2 per channel pair;
// saving 1 - 2/n = 33% for n = 3 (Inception-v3 3).
inline double asymmetric_ratio(int n) { return 2.0 / n; }

// 1x1 bottleneck M -> K, then k x k K -> N: M K + k^2 K N.
inline double bottleneck_params(double m, double k_ch, double n, int k) { return m * k_ch + double(k) * k * k_ch * n; }

// Depthwise separable over standard: (k^2 C_in + C_in C_out) / (k^2 C_in C_out)
// = 1/C_out + 1/k^2 (MobileNet 3.1).
inline double separable_ratio(double cout, int k) { return 1.0 / cout + 1.0 / (double(k) * k); }

// Ghost module (GhostNet 3.1): intrinsic m = ceil(C_out / s) maps from a
// standard k x k conv, (s - 1) cheap d x d depthwise maps from each,
// concatenated and truncated to C_out.
inline double ghost_intrinsic(double cout, int s) { return std::ceil(cout / s); }
inline double ghost_params(double cin, double cout, int k, int s, int d) {
  const double m = ghost_intrinsic(cout, s);
  return m * cin * k * k + m * (s - 1) * d * d;
}
// Speed-up over the standard conv, r_s = c k^2 / ((1/s) c k^2 + ((s-1)/s) d^2) ~ s
// (c = C_in; GhostNet eq. 4); the parameter compression r_c has the same form.
inline double ghost_speedup(double cin, int k, int s, int d) {
  const double ck2 = cin * k * k;
  return ck2 / (ck2 / s + (s - 1.0) / s * d * d);
}

}  // namespace sp::conv::models
