#pragma once
// Convolution as im2col followed by the project's GEMM: for each
// image the input patches are unrolled into a (C_in/g * kh * kw) x (OH * OW)
// matrix per group, and the group's weights, a C_out/g x (C_in/g * kh * kw)
// row-major matrix as stored, multiply it with kernels/gemm/gemm_tiled.hpp.
// The unrolled matrix costs kh*kw times the input in memory traffic: the
// price of reusing a tuned GEMM.
#include <Kokkos_Core.hpp>

#include "kernels/conv/conv_views.hpp"
#include "kernels/gemm/gemm_tiled.hpp"

namespace sp::conv {

// Workspace the caller allocates once: rows x cols of the unrolled matrix (all groups).
inline int64_t im2col_rows(const ConvSpec& s) { return int64_t(s.c_in) * s.kh * s.kw; }
inline int64_t im2col_cols(const ConvSpec& s, int h, int w) { return int64_t(s.out_h(h)) * s.out_w(w); }

template <class T>
void conv2d_im2col(const ConvSpec& s, CTensor<T> in, CTensor<T> w, CVec<T> b, Tensor<T> out,
                   Kokkos::View<T**, Kokkos::LayoutRight> col) {
  using M2 = Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using CM2 = Kokkos::View<const T**, Kokkos::LayoutRight, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int N = static_cast<int>(in.extent(0)), H = static_cast<int>(in.extent(2)), W = static_cast<int>(in.extent(3));
  const int OH = s.out_h(H), OW = s.out_w(W), G = s.groups;
  const int K = s.cin_g() * s.kh * s.kw, cout_g = s.cout_g(), P = OH * OW;
  for (int n = 0; n < N; ++n) {
    // col[(ic * kh + r) * kw + c][oh * OW + ow] = padded input at (ic, oh*stride - pad + r, ow*stride - pad + c)
    Kokkos::parallel_for(
        "conv_im2col", Kokkos::RangePolicy<>(0, int64_t(s.c_in) * s.kh * s.kw * P), KOKKOS_LAMBDA(const int64_t idx) {
          const int p = static_cast<int>(idx % P);
          const int64_t row = idx / P;
          const int c = static_cast<int>(row % s.kw), r = static_cast<int>((row / s.kw) % s.kh);
          const int ic = static_cast<int>(row / (int64_t(s.kw) * s.kh));
          const int ih = (p / OW) * s.stride - s.pad_h + r, iw = (p % OW) * s.stride - s.pad_w + c;
          col(row, p) = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? in(n, ic, ih, iw) : T(0);
        });
    for (int g = 0; g < G; ++g) {
      CM2 wg(w.data() + int64_t(g) * cout_g * K, cout_g, K);
      CM2 cg(col.data() + int64_t(g) * K * P, K, P);
      M2 og(out.data() + (int64_t(n) * s.c_out + int64_t(g) * cout_g) * P, cout_g, P);
      sp::kernels::gemm_tiled<T>(wg, cg, og);
    }
  }
  if (!s.bias && s.act == Act::none) return;
  Kokkos::parallel_for(
      "conv_bias_act", Kokkos::RangePolicy<>(0, int64_t(N) * s.c_out * P), KOKKOS_LAMBDA(const int64_t idx) {
        const int oc = static_cast<int>((idx / P) % s.c_out);
        T* o = out.data() + idx;
        *o = activate(*o + (s.bias ? b(oc) : T(0)), s.act);
      });
}

}  // namespace sp::conv
