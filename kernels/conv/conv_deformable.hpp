#pragma once
// Deformable convolution, forward (docs/compression.md): v1 (Dai et al.
// 2017) samples the input of tap (r, c) of output (oh, ow) at the learned
// position p = p0 + (r, c) + dp(oh, ow) by bilinear interpolation, zero
// outside the image; v2 (Zhu et al. 2019) also multiplies each sample by a
// learned mask m in [0, 1]. Offsets [N][2 dg kh kw][OH][OW] hold (dy, dx)
// per tap of each of dg offset groups (channel groups of C_in / dg);
// masks [N][dg kh kw][OH][OW].
//
// Computed as deformable im2col + a GEMM: the samples of one image fill the
// (C_in kh kw) x (OH OW) matrix that im2col would hold, and the weights
// (C_out x C_in kh kw) multiply it with im2col's strip GEMM
// (conv_gemm_strips.hpp), so with
// offsets 0 (and masks 1) the matrix is im2col's, element for element, and
// the output equals conv2d_im2col's bitwise.
//
// The sampling position is one fp32 add, y = fl(oh s - pad + r + dy) (part
// of the operator's definition, as in the published implementations); the
// corner weights (1 - ly)(1 - lx), ... and the sample are computed in fp32.
#include <Kokkos_Core.hpp>
#include <string>

#include "kernels/conv/conv_views.hpp"
#include "kernels/conv/conv_gemm_strips.hpp"
#include "scaleproof/params.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::conv {

// FLOPs of one bilinear sample: fractions (2), their complements (2), four
// corner weights (4), four products and three sums (7); a mask adds one.
inline constexpr int kSampleFlops = 15;

inline std::string shape_string(int64_t a, int64_t b, int64_t c, int64_t d) {
  return std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c) + "x" + std::to_string(d);
}

// "" when an offsets tensor of extents e[0..3] fits this layer on N x H x W, else the one-line problem.
inline std::string deform_offsets_error(const ConvSpec& s, int dg, int N, int H, int W, const int64_t (&e)[4]) {
  const int64_t want[4] = {N, int64_t(2) * dg * s.kh * s.kw, s.out_h(H), s.out_w(W)};
  for (int i = 0; i < 4; ++i)
    if (e[i] != want[i])
      return "offsets tensor " + shape_string(e[0], e[1], e[2], e[3]) + " has the wrong shape (needs " +
             shape_string(want[0], want[1], want[2], want[3]) + ": N x 2*dg*kh*kw x OH x OW)";
  return "";
}

// Bilinear sample of plane (n, ic) at (y, x), zero outside [0, H) x [0, W).
template <class T>
KOKKOS_INLINE_FUNCTION T bilinear(const CTensor<T>& in, int n, int ic, T y, T x) {
  const int H = static_cast<int>(in.extent(2)), W = static_cast<int>(in.extent(3));
  if (!(y > T(-1) && y < T(H) && x > T(-1) && x < T(W))) return T(0);  // all four corners outside (or NaN)
  int y0 = static_cast<int>(y), x0 = static_cast<int>(x);              // truncation, then floor for -1 < y < 0
  if (T(y0) > y) --y0;
  if (T(x0) > x) --x0;
  const T ly = y - T(y0), lx = x - T(x0), hy = T(1) - ly, hx = T(1) - lx;
  auto at = [&](int yy, int xx) { return yy >= 0 && yy < H && xx >= 0 && xx < W ? in(n, ic, yy, xx) : T(0); };
  return hy * hx * at(y0, x0) + hy * lx * at(y0, x0 + 1) + ly * hx * at(y0 + 1, x0) + ly * lx * at(y0 + 1, x0 + 1);
}

// col[(ic kh + r) kw + c][oh OW + ow] = m * sample for image n.
template <class T>
SP_UNIT_LOCAL void deform_im2col(const ConvSpec& s, int dg, CTensor<T> in, CTensor<T> off, CTensor<T> mask,
                                 bool modulated, int n, Kokkos::View<T**, Kokkos::LayoutRight> col) {
  const int H = static_cast<int>(in.extent(2)), W = static_cast<int>(in.extent(3));
  const int OW = s.out_w(W), P = s.out_h(H) * OW, cpg = s.c_in / dg;
  Kokkos::parallel_for(
      "deform_im2col", Kokkos::RangePolicy<>(0, int64_t(s.c_in) * s.kh * s.kw * P), KOKKOS_LAMBDA(const int64_t idx) {
        const int p = static_cast<int>(idx % P);
        const int64_t row = idx / P;
        const int c = static_cast<int>(row % s.kw), r = static_cast<int>((row / s.kw) % s.kh);
        const int ic = static_cast<int>(row / (int64_t(s.kw) * s.kh));
        const int oh = p / OW, ow = p % OW, tap = (ic / cpg) * s.kh * s.kw + r * s.kw + c;
        const T y = T(oh * s.stride - s.pad_h + r) + off(n, 2 * tap, oh, ow);
        const T x = T(ow * s.stride - s.pad_w + c) + off(n, 2 * tap + 1, oh, ow);
        const T v = bilinear(in, n, ic, y, x);
        col(row, p) = modulated ? mask(n, tap, oh, ow) * v : v;
      });
}

// out = conv(in, w) with deformed sampling; groups = 1, no bias. Throws
// sp::InputError when the offsets (or masks) do not fit the layer.
template <class T>
void conv2d_deformable(const ConvSpec& s, int dg, CTensor<T> in, CTensor<T> off, CTensor<T> mask, bool modulated,
                       CTensor<T> w, Tensor<T> out, Kokkos::View<T**, Kokkos::LayoutRight> col) {
  const int N = static_cast<int>(in.extent(0)), H = static_cast<int>(in.extent(2)), W = static_cast<int>(in.extent(3));
  const int64_t e[4] = {int64_t(off.extent(0)), int64_t(off.extent(1)), int64_t(off.extent(2)), int64_t(off.extent(3))};
  const std::string bad = deform_offsets_error(s, dg, N, H, W, e);
  if (!bad.empty()) throw sp::InputError("conv_deformable: " + bad);
  if (modulated && (mask.extent(0) != size_t(N) || mask.extent(1) != size_t(dg) * s.kh * s.kw ||
                    mask.extent(2) != off.extent(2) || mask.extent(3) != off.extent(3)))
    throw sp::InputError("conv_deformable: masks tensor must be N x dg*kh*kw x OH x OW");
  const int K = s.c_in * s.kh * s.kw, P = s.out_h(H) * s.out_w(W);
  for (int n = 0; n < N; ++n) {
    deform_im2col<T>(s, dg, in, off, mask, modulated, n, col);
    StripGemm d;
    d.M = s.c_out, d.K = K, d.P = P;
    strip_gemm<T>("conv_deformable_gemm", 1, d, w.data(), col.data(), nullptr, out.data() + int64_t(n) * s.c_out * P,
                  Act::none);
  }
}

}  // namespace sp::conv
