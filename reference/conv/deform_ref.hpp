#pragma once
// Reference deformable convolution (v1 and v2), plain loops in long double,
// given the offsets and masks the layer's own convolutions produced (fp32,
// checked separately against conv_ref). Zero outside the image.
//
// Per-element bound for an fp32 kernel (u = 2^-24). The position
// y = fl32(y0 + dy) is the operator's definition, so it is formed here by the
// same fp32 add; from it:
//  - fraction ly = y - floor(y) carries <= u (it rounds only for -1 < y < 0),
//    hy = 1 - ly <= 2u, each corner weight hy hx <= 6u, all absolute;
//  - sample s = sum_4 c_i v_i: |s^ - s| <= gamma_4 S + (1 + gamma_4) 6u V,
//    S = sum |c_i||v_i|, V = sum |v_i| over the corners in the image;
//  - with a mask: t = fl(m s^), |t^ - m s| <= m e_s + u m (S + e_s);
//  - output, a length-L dot product (L = C_in kh kw):
//    |y^ - y| <= gamma_L sum |w| (m S + e_t) + sum |w| e_t.
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/conv/conv_spec.hpp"
#include "reference/conv/conv_ref.hpp"

namespace sp::reference {

// x: [N][C][H][W]; off: [N][2 dg kh kw][OH][OW] as (dy, dx) per tap; mask:
// [N][dg kh kw][OH][OW] or empty (v1); w: [C_out][C_in][kh][kw].
inline RefTensor deform_conv_ref(const conv::ConvSpec& s, int dg, int N, int H, int W, const std::vector<float>& x,
                                 const std::vector<float>& off, const std::vector<float>& mask,
                                 const std::vector<float>& w) {
  const double u = 0x1p-24;
  const int OH = s.out_h(H), OW = s.out_w(W), T = dg * s.kh * s.kw, cpg = s.c_in / dg;
  const int64_t L = int64_t(s.c_in) * s.kh * s.kw;
  const double gL = gamma_ref(double(L), u), g4 = gamma_ref(4, u);
  RefTensor y;
  y.resize(N, s.c_out, OH, OW);
  std::vector<long double> t(L), tmag(L), terr(L);
  for (int n = 0; n < N; ++n)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        // The L sampled (and masked) inputs of this output position, their magnitudes and bounds.
        for (int ic = 0; ic < s.c_in; ++ic)
          for (int r = 0; r < s.kh; ++r)
            for (int c = 0; c < s.kw; ++c) {
              const int tap = (ic / cpg) * s.kh * s.kw + r * s.kw + c;
              const auto at = [&](int ch, int64_t plane) { return ((int64_t(n) * ch + plane) * OH + oh) * OW + ow; };
              const float py = float(oh * s.stride - s.pad_h + r) + off[at(2 * T, 2 * tap)];
              const float px = float(ow * s.stride - s.pad_w + c) + off[at(2 * T, 2 * tap + 1)];
              long double smp = 0, S = 0, V = 0;
              if (py > -1 && py < H && px > -1 && px < W) {
                const long double fy = std::floor((long double)py), fx = std::floor((long double)px);
                const long double ly = py - fy, lx = px - fx;
                for (int dy = 0; dy < 2; ++dy)
                  for (int dx = 0; dx < 2; ++dx) {
                    const int yy = int(fy) + dy, xx = int(fx) + dx;
                    if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                    const long double cw = (dy ? ly : 1 - ly) * (dx ? lx : 1 - lx);
                    const long double v = x[((int64_t(n) * s.c_in + ic) * H + yy) * W + xx];
                    smp += cw * v, S += std::fabs(cw * v), V += std::fabs(v);
                  }
              }
              const double es = g4 * double(S) + (1 + g4) * 6 * u * double(V);
              const long double m = mask.empty() ? 1.0L : (long double)mask[at(T, tap)];
              const int64_t k = (int64_t(ic) * s.kh + r) * s.kw + c;
              t[k] = m * smp;
              tmag[k] = m * S;
              terr[k] = mask.empty() ? es : double(m) * es + u * double(m) * (double(S) + es);
            }
        for (int oc = 0; oc < s.c_out; ++oc) {
          long double sum = 0, mag = 0, carried = 0;
          for (int64_t k = 0; k < L; ++k) {
            const long double wv = std::fabs((long double)w[oc * L + k]);
            sum += (long double)w[oc * L + k] * t[k];
            mag += wv * (tmag[k] + terr[k]);
            carried += wv * terr[k];
          }
          const int64_t yi = y.at(n, oc, oh, ow);
          y.v[yi] = sum;
          y.err[yi] = gL * double(mag) + double(carried);
        }
      }
  return y;
}

}  // namespace sp::reference
