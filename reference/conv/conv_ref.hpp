#pragma once
// Reference convolution and block operations: plain nested loops in long
// double, written from the definitions, no Kokkos. Each value carries the
// bound on how far a correct fp32/fp64 kernel may be from it (err), built
// by Higham's analysis and propagated through stacked layers:
//
//   conv: y = sum_{L terms} w x (+ b). The kernel sums the same terms of its
//   own input x^ = x + d, |d| <= e_x, in any order, so
//     |y^ - y| <= gamma_L(u) * (sum |w| (|x| + e_x) + |b|) + sum |w| e_x
//   (Higham 2002, eq. 3.5, for the rounding of a length-L sum; the second
//   term carries the input's error through the weights). L = C_in/g*kh*kw,
//   +1 with a bias.
//   relu is 1-Lipschitz and exact: err unchanged.
//   sigmoid has slope <= 1/4; its evaluation 1/(1+exp(-x)) adds at most
//   8u relative (exp to 2 ulp, one add, one divide, a factor 2 to spare).
//   add: one rounding of (a^ + b^): e_a + e_b + u (|a| + |b| + e_a + e_b).
//   mean over P values: gamma_{P+1} (sum then divide) of mean(|x| + e) + mean(e).
//   scale x s: |s| e_x + |x| e_s + e_x e_s + u (|x| + e_x)(|s| + e_s).
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/conv/conv_spec.hpp"

namespace sp::reference {

struct RefTensor {
  int n = 0, c = 0, h = 0, w = 0;
  std::vector<long double> v;  // exact-arithmetic value (to long double rounding)
  std::vector<double> err;     // bound on |kernel - v| for this element
  int64_t at(int in, int ic, int ih, int iw) const { return ((int64_t(in) * c + ic) * h + ih) * w + iw; }
  void resize(int n_, int c_, int h_, int w_) {
    n = n_, c = c_, h = h_, w = w_;
    v.assign(int64_t(n) * c * h * w, 0.0L);
    err.assign(v.size(), 0.0);
  }
};

inline double gamma_ref(double n, double u) { return n * u < 1 ? n * u / (1 - n * u) : INFINITY; }

inline void activate_ref(conv::Act a, long double& v, double& e, double u) {
  if (a == conv::Act::relu) {
    if (v < 0) v = 0;
  } else if (a == conv::Act::sigmoid) {
    v = 1.0L / (1.0L + std::exp(-v));
    e = 0.25 * e + 8 * u * (static_cast<double>(v) + 0.25 * e);
  }
}

// w: [C_out][C_in/g][kh][kw]; b: [C_out] or empty.
template <class T>
RefTensor conv_ref(const conv::ConvSpec& s, const RefTensor& x, const std::vector<T>& w, const std::vector<T>& b,
                   double u) {
  RefTensor y;
  const int oh_n = s.out_h(x.h), ow_n = s.out_w(x.w);
  y.resize(x.n, s.c_out, oh_n, ow_n);
  const int cin_g = s.c_in / s.groups, cout_g = s.c_out / s.groups;
  const double g = gamma_ref(static_cast<double>(int64_t(cin_g) * s.kh * s.kw + (s.bias ? 1 : 0)), u);
  for (int n = 0; n < x.n; ++n)
    for (int oc = 0; oc < s.c_out; ++oc) {
      const int grp = oc / cout_g;
      for (int oh = 0; oh < oh_n; ++oh)
        for (int ow = 0; ow < ow_n; ++ow) {
          long double sum = 0, mag = 0, carried = 0;
          for (int icg = 0; icg < cin_g; ++icg)
            for (int r = 0; r < s.kh; ++r)
              for (int c = 0; c < s.kw; ++c) {
                const int ih = oh * s.stride - s.pad_h + r, iw = ow * s.stride - s.pad_w + c;
                if (ih < 0 || ih >= x.h || iw < 0 || iw >= x.w) continue;  // zero padding
                const int64_t xi = x.at(n, grp * cin_g + icg, ih, iw);
                const long double wv = w[((int64_t(oc) * cin_g + icg) * s.kh + r) * s.kw + c];
                sum += wv * x.v[xi];
                mag += std::fabs(wv) * (std::fabs(x.v[xi]) + x.err[xi]);
                carried += std::fabs(wv) * x.err[xi];
              }
          if (s.bias) {
            sum += b[oc];
            mag += std::fabs(static_cast<long double>(b[oc]));
          }
          const int64_t yi = y.at(n, oc, oh, ow);
          y.v[yi] = sum;
          y.err[yi] = g * static_cast<double>(mag) + static_cast<double>(carried);
          activate_ref(s.act, y.v[yi], y.err[yi], u);
        }
    }
  return y;
}

inline RefTensor add_ref(const RefTensor& a, const RefTensor& b, conv::Act act, double u) {
  RefTensor y = a;
  for (size_t i = 0; i < y.v.size(); ++i) {
    y.v[i] = a.v[i] + b.v[i];
    y.err[i] =
        a.err[i] + b.err[i] + u * (static_cast<double>(std::fabs(a.v[i]) + std::fabs(b.v[i])) + a.err[i] + b.err[i]);
    activate_ref(act, y.v[i], y.err[i], u);
  }
  return y;
}

// Channels [src0, src0 + count) of x into channels [c0, c0 + count) of y (y already sized).
inline void copy_channels_ref(const RefTensor& x, int src0, RefTensor& y, int c0, int count) {
  for (int n = 0; n < x.n; ++n)
    for (int c = 0; c < count; ++c)
      for (int h = 0; h < x.h; ++h)
        for (int w = 0; w < x.w; ++w) {
          y.v[y.at(n, c0 + c, h, w)] = x.v[x.at(n, src0 + c, h, w)];
          y.err[y.at(n, c0 + c, h, w)] = x.err[x.at(n, src0 + c, h, w)];
        }
}

inline RefTensor mean_ref(const RefTensor& x, double u) {
  RefTensor y;
  y.resize(x.n, x.c, 1, 1);
  const int64_t p = int64_t(x.h) * x.w;
  const double g = gamma_ref(static_cast<double>(p + 1), u);
  for (int n = 0; n < x.n; ++n)
    for (int c = 0; c < x.c; ++c) {
      long double s = 0, mag = 0, e = 0;
      for (int h = 0; h < x.h; ++h)
        for (int w = 0; w < x.w; ++w) {
          const int64_t i = x.at(n, c, h, w);
          s += x.v[i];
          mag += std::fabs(x.v[i]) + x.err[i];
          e += x.err[i];
        }
      y.v[y.at(n, c, 0, 0)] = s / p;
      y.err[y.at(n, c, 0, 0)] = static_cast<double>(g * mag / p + e / p);
    }
  return y;
}

// y[n][c][h][w] = x[n][c][h][w] * s[n][c][0][0].
inline RefTensor scale_ref(const RefTensor& x, const RefTensor& s, double u) {
  RefTensor y = x;
  for (int n = 0; n < x.n; ++n)
    for (int c = 0; c < x.c; ++c) {
      const int64_t si = s.at(n, c, 0, 0);
      const double as = static_cast<double>(std::fabs(s.v[si])), es = s.err[si];
      for (int h = 0; h < x.h; ++h)
        for (int w = 0; w < x.w; ++w) {
          const int64_t i = x.at(n, c, h, w);
          const double ax = static_cast<double>(std::fabs(x.v[i])), ex = x.err[i];
          y.v[i] = x.v[i] * s.v[si];
          y.err[i] = as * ex + ax * es + ex * es + u * (ax + ex) * (as + es);
        }
    }
  return y;
}

}  // namespace sp::reference
