#pragma once
// Direct 2-D convolution, NCHW, any kernel size, stride, padding and groups,
// with bias and activation fused. One source for every back end.
//
// Work item = one output row (n, group, oh). The item first copies the kh
// input rows it needs, for all C_in/g channels of its group, into scratch,
// zero-padded left and right and widened to whole register tiles, so the
// inner loop never tests a bound (padding, odd widths and tails cost
// nothing there). The row copy reads each input row kh times from cache and
// once from memory; it adds no DRAM traffic.
// Then for every block of OCB output channels and WB output columns it
// accumulates an OCB x WB register tile (CPU: 6 x 16 fp32 = 12 AVX2
// registers, the GEMM micro-kernel shape of kernels/gemm/gemm_tiled.hpp):
// for each (ic, r, c) tap WB inputs are loaded once and reused by OCB
// weights, and the WB-wide inner loop is contiguous for stride 1, so it
// vectorizes.
#include <Kokkos_Core.hpp>

#include "kernels/conv/conv_views.hpp"

namespace sp::conv {

template <class T>
struct DirectTiles {
  static constexpr int OCB = 6;                               // output channels per register tile
  static constexpr int WB = 64 / static_cast<int>(sizeof(T));  // output columns: 16 fp32, 8 fp64
};

namespace detail {

// acc[o][j] = sum over (ic, r, c) of w[o][ic][r][c] * row_{ic,r}[(ow0 + j) * stride + c].
template <class T, int OCB, int WB, bool S1>
KOKKOS_INLINE_FUNCTION void direct_tile(const T* rows, int wp, int kh, int kw, int stride, int cin_g, const T* w,
                                        int w_oc_stride, int ow0, T (&acc)[OCB][WB]) {
  for (int o = 0; o < OCB; ++o)
    for (int j = 0; j < WB; ++j) acc[o][j] = T(0);
  for (int ic = 0; ic < cin_g; ++ic)
    for (int r = 0; r < kh; ++r) {
      const T* row = rows + (ic * kh + r) * wp;
      const T* wr = w + (ic * kh + r) * kw;
      for (int c = 0; c < kw; ++c) {
        T x[WB];
        for (int j = 0; j < WB; ++j) x[j] = S1 ? row[ow0 + j + c] : row[(ow0 + j) * stride + c];
        for (int o = 0; o < OCB; ++o) {
          const T wv = wr[o * w_oc_stride + c];
          for (int j = 0; j < WB; ++j) acc[o][j] += wv * x[j];
        }
      }
    }
}

template <class T, int OCB, int WB, bool S1, class Out, class Bias>
KOKKOS_INLINE_FUNCTION void direct_block(const ConvSpec& s, const T* rows, int wp, const T* w, const Bias& b,
                                         const Out& out, int n, int oc0, int oh, int ow0, int ow_end) {
  T acc[OCB][WB];
  const int w_oc_stride = s.cin_g() * s.kh * s.kw;
  direct_tile<T, OCB, WB, S1>(rows, wp, s.kh, s.kw, s.stride, s.cin_g(), w + oc0 * w_oc_stride, w_oc_stride, ow0,
                              acc);
  const int jmax = ow_end - ow0 < WB ? ow_end - ow0 : WB;
  for (int o = 0; o < OCB; ++o) {
    const T bo = s.bias ? b(oc0 + o) : T(0);
    for (int j = 0; j < jmax; ++j) out(n, oc0 + o, oh, ow0 + j) = activate(acc[o][j] + bo, s.act);
  }
}

}  // namespace detail

// Scratch width of one padded input row: whole WB tiles of outputs.
template <class T>
inline int direct_row_width(const ConvSpec& s, int w) {
  constexpr int WB = DirectTiles<T>::WB;
  const int ow = s.out_w(w);
  const int nwb = (ow + WB - 1) / WB;
  return (nwb * WB - 1) * s.stride + s.kw;
}

// out = act(conv(in, w) + b); b may be empty when !s.bias. Shapes must
// already be validated (conv::validate) and out sized [N][C_out][OH][OW].
template <class T, class Space = Kokkos::DefaultExecutionSpace>
void conv2d_direct(const ConvSpec& s, CTensor<T> in, CTensor<T> w, CVec<T> b, Tensor<T> out) {
  constexpr int OCB = DirectTiles<T>::OCB, WB = DirectTiles<T>::WB;
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<T*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int N = static_cast<int>(in.extent(0)), H = static_cast<int>(in.extent(2)), W = static_cast<int>(in.extent(3));
  const int OH = s.out_h(H), OW = s.out_w(W), G = s.groups;
  const int cin_g = s.cin_g(), cout_g = s.cout_g();
  const int wp = direct_row_width<T>(s, W);
  const int rows_len = cin_g * s.kh * wp;
  const bool s1 = s.stride == 1;
  Policy policy(N * G * OH, 1);
  Kokkos::parallel_for(
      "conv2d_direct", policy.set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(rows_len))),
      KOKKOS_LAMBDA(const Member& m) {
        const int item = m.league_rank();
        const int oh = item % OH, g = (item / OH) % G, n = item / (OH * G);
        Scratch rows(m.team_scratch(0), rows_len);
        // Zero-padded copy of the kh input rows of this group's channels.
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, rows_len), [&](const int idx) {
          const int x = idx % wp, r = (idx / wp) % s.kh, ic = idx / (wp * s.kh);
          const int ih = oh * s.stride - s.pad_h + r, iw = x - s.pad_w;
          rows(idx) = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? in(n, g * cin_g + ic, ih, iw) : T(0);
        });
        m.team_barrier();
        const T* rp = &rows(0);
        const T* wg = w.data();
        const int nob = cout_g / OCB;
        const int nwb = (OW + WB - 1) / WB;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, (nob + (cout_g - nob * OCB)) * nwb), [&](const int t) {
          const int ob = t / nwb, ow0 = (t % nwb) * WB;
          if (ob < nob) {
            const int oc0 = g * cout_g + ob * OCB;
            if (s1) detail::direct_block<T, OCB, WB, true>(s, rp, wp, wg, b, out, n, oc0, oh, ow0, OW);
            else detail::direct_block<T, OCB, WB, false>(s, rp, wp, wg, b, out, n, oc0, oh, ow0, OW);
          } else {  // leftover channels when C_out/g is not a multiple of OCB: one at a time
            const int oc0 = g * cout_g + nob * OCB + (ob - nob);
            if (s1) detail::direct_block<T, 1, WB, true>(s, rp, wp, wg, b, out, n, oc0, oh, ow0, OW);
            else detail::direct_block<T, 1, WB, false>(s, rp, wp, wg, b, out, n, oc0, oh, ow0, OW);
          }
        });
      });
}

}  // namespace sp::conv
