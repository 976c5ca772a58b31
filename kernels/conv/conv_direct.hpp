#pragma once
// Direct 2-D convolution, NCHW, any kernel size, stride, padding and groups,
// with bias and activation fused. One source for every back end.
//
// Work item = a block of R output rows (n, group, rows). The item first
// copies the input rows they need, for all C_in/g channels of its group,
// into scratch (sized for the per-core L2), zero-padded on every side and
// widened to whole register tiles, so the inner loop never tests a bound
// (padding, odd widths and tails cost nothing there). Each input element is
// read from memory about once per item and the copy adds no DRAM traffic;
// a depthwise item holds a whole plane.
// Then for every block of OCB output channels and WB output columns it
// accumulates an OCB x WB register tile (CPU: 6 x 16 fp32 = 12 AVX2
// registers, the GEMM micro-kernel shape of kernels/gemm/gemm_tiled.hpp):
// for each (ic, r, c) tap WB inputs are loaded once and reused by OCB
// weights, and the WB-wide inner loop is contiguous for stride 1, so it
// vectorizes.
#include <Kokkos_Core.hpp>

#include "kernels/conv/conv_direct_simd.hpp"
#include "kernels/conv/conv_views.hpp"
#include "scaleproof/kokkos_compat.hpp"

// OpenMP's simd hint where a host compiler sees it; nothing for device code.
#if defined(_OPENMP) && !defined(__CUDA_ARCH__)
#define SP_CONV_SIMD _Pragma("omp simd")
#else
#define SP_CONV_SIMD
#endif

namespace sp::conv {

template <class T, class Space = Kokkos::DefaultExecutionSpace>
struct DirectTiles {
  static constexpr int OCB = 6;                                // output channels per register tile
  static constexpr int WB = 64 / static_cast<int>(sizeof(T));  // output columns: 16 fp32, 8 fp64
  static constexpr int scratch_bytes = 192 * 1024;             // input rows per item, well inside a 1 MiB L2
};

#ifdef KOKKOS_ENABLE_CUDA
template <class T>
struct DirectTiles<T, Kokkos::Cuda> {
  static constexpr int OCB = 4, WB = 8;
  static constexpr int scratch_bytes = 32 * 1024;  // under the 48 KiB of shared memory per block
};
#endif

namespace detail {

// acc[o][j] = sum over (ic, r, c) of w[o][ic][r][c] * rows[ic][r0 + r][(ow0 + j) * stride + c].
template <class T, int OCB, int WB, bool S1>
KOKKOS_INLINE_FUNCTION void direct_tile(const T* rows, int ic_stride, int wp, int r0, int kh, int kw, int stride,
                                        int cin_g, const T* w, int w_oc_stride, int ow0, T (&acc)[OCB][WB]) {
  for (int o = 0; o < OCB; ++o)
    for (int j = 0; j < WB; ++j) acc[o][j] = T(0);
  for (int ic = 0; ic < cin_g; ++ic)
    for (int r = 0; r < kh; ++r) {
      const T* row = rows + ic * ic_stride + (r0 + r) * wp;
      const T* wr = w + (ic * kh + r) * kw;
      for (int c = 0; c < kw; ++c) {
        const T* xr = S1 ? row + ow0 + c : row + ow0 * stride + c;
        for (int o = 0; o < OCB; ++o) {
          const T wv = wr[o * w_oc_stride + c];
          // Without the simd hint GCC does not vectorize this 16-long loop
          // (measured: 12x slower); with it, one FMA per 16 columns.
          SP_CONV_SIMD
          for (int j = 0; j < WB; ++j) acc[o][j] += wv * xr[S1 ? j : j * stride];
        }
      }
    }
}

template <class T, int OCB, int WB, bool S1, class Out, class Bias>
KOKKOS_INLINE_FUNCTION void direct_block(const ConvSpec& s, const T* rows, int ic_stride, int wp, int r0, const T* w,
                                         const Bias& b, const Out& out, int n, int oc0, int oh, int ow0, int ow_end) {
  T acc[OCB][WB];
  const int w_oc_stride = s.cin_g() * s.kh * s.kw;
  direct_tile<T, OCB, WB, S1>(rows, ic_stride, wp, r0, s.kh, s.kw, s.stride, s.cin_g(), w + oc0 * w_oc_stride,
                              w_oc_stride, ow0, acc);
  const int jmax = ow_end - ow0 < WB ? ow_end - ow0 : WB;
  for (int o = 0; o < OCB; ++o) {
    const T bo = s.bias ? b(oc0 + o) : T(0);
    T* dst = &out(n, oc0 + o, oh, ow0);
    if (s.act == Act::none)
      for (int j = 0; j < jmax; ++j) dst[j] = acc[o][j] + bo;
    else
      for (int j = 0; j < jmax; ++j) dst[j] = activate(acc[o][j] + bo, s.act);
  }
}

template <class T, int OCB, int WB, bool S1, class Out, class Bias>
KOKKOS_INLINE_FUNCTION void direct_dispatch(int width, const ConvSpec& s, const T* rows, int ic_stride, int wp, int r0,
                                            const T* w, const Bias& b, const Out& out, int n, int oc0, int oh, int ow0,
                                            int ow_end) {
  if (width == OCB)
    direct_block<T, OCB, WB, S1>(s, rows, ic_stride, wp, r0, w, b, out, n, oc0, oh, ow0, ow_end);
  else if (width == 4)
    direct_block<T, 4, WB, S1>(s, rows, ic_stride, wp, r0, w, b, out, n, oc0, oh, ow0, ow_end);
  else if (width == 2)
    direct_block<T, 2, WB, S1>(s, rows, ic_stride, wp, r0, w, b, out, n, oc0, oh, ow0, ow_end);
  else
    direct_block<T, 1, WB, S1>(s, rows, ic_stride, wp, r0, w, b, out, n, oc0, oh, ow0, ow_end);
}

}  // namespace detail

// Scratch width of one padded input row: whole WB tiles of outputs.
template <class T, class Space = Kokkos::DefaultExecutionSpace>
inline int direct_row_width(const ConvSpec& s, int w) {
  constexpr int WB = DirectTiles<T, Space>::WB;
  const int nwb = (s.out_w(w) + WB - 1) / WB;
  return (nwb * WB - 1) * s.stride + s.kw;
}

// Output rows per work item: as many as keep the item's input rows within the scratch budget.
template <class T, class Space = Kokkos::DefaultExecutionSpace>
inline int direct_rows_per_item(const ConvSpec& s, int h, int w) {
  const int per_row = s.cin_g() * direct_row_width<T, Space>(s, w) * static_cast<int>(sizeof(T));
  const int in_rows = DirectTiles<T, Space>::scratch_bytes / per_row;  // (R - 1) * stride + kh <= in_rows
  const int r = in_rows >= s.kh ? (in_rows - s.kh) / s.stride + 1 : 1;
  return r < s.out_h(h) ? r : s.out_h(h);
}

// out = act(conv(in, w) + b); b may be empty when !s.bias. Shapes must
// already be validated (conv::validate) and out sized [N][C_out][OH][OW].
template <class T, class Space = Kokkos::DefaultExecutionSpace>
SP_UNIT_LOCAL void conv2d_direct(const ConvSpec& s, CTensor<T> in, CTensor<T> w, CVec<T> b, Tensor<T> out) {
#if defined(SP_HOST_AVX2) || defined(SP_HOST_AVX512)
  if constexpr (detail::DirectVec<T>::L > 0)
    if (s.stride == 1) return conv2d_direct_simd<T, Space>(s, in, w, b, out);
#endif
  constexpr int OCB = DirectTiles<T, Space>::OCB, WB = DirectTiles<T, Space>::WB;
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<T*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int N = static_cast<int>(in.extent(0)), H = static_cast<int>(in.extent(2)), W = static_cast<int>(in.extent(3));
  const int OH = s.out_h(H), OW = s.out_w(W), G = s.groups;
  const int cin_g = s.cin_g(), cout_g = s.cout_g();
  const int wp = direct_row_width<T, Space>(s, W);
  const int R = direct_rows_per_item<T, Space>(s, H, W);
  const int nrb = (OH + R - 1) / R;
  const int in_rows = (R - 1) * s.stride + s.kh;
  const int ic_stride = in_rows * wp;
  const int rows_len = cin_g * ic_stride;
  const bool s1 = s.stride == 1;
  // Channel tiles: full OCB-wide ones, then the remainder as at most one 4-, one 2- and one 1-wide tile.
  const int nob = cout_g / OCB, rem = cout_g - nob * OCB;
  const int ntiles_c = nob + (rem >= 4) + ((rem & 3) >= 2) + (rem & 1), nwb = (OW + WB - 1) / WB;
  Policy policy(N * G * nrb, 1);
  // An item holds at least one output row's input rows; where these outgrow
  // a GPU block's shared memory (many input channels) they go to the
  // team's global-memory scratch (level 1) instead.
  const int bytes = static_cast<int>(Scratch::shmem_size(rows_len));
  const int level = bytes <= Policy::scratch_size_max(0) ? 0 : 1;
  Kokkos::parallel_for(
      "conv2d_direct", policy.set_scratch_size(level, Kokkos::PerTeam(bytes)), KOKKOS_LAMBDA(const Member& m) {
        const int item = m.league_rank();
        const int rb = item % nrb, g = (item / nrb) % G, n = item / (nrb * G);
        const int oh0 = rb * R, ih0 = oh0 * s.stride - s.pad_h;
        Scratch rows(m.team_scratch(level), rows_len);
        // Zero-padded copy of this item's input rows, one (channel, row) per thread.
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, cin_g * in_rows), [&](const int cr) {
          const int ic = cr / in_rows, ih = ih0 + cr % in_rows;
          T* dst = &rows(cr * wp);
          // Zeros left of the input, the input row, zeros right of it: three plain loops.
          const int lo = ih >= 0 && ih < H ? (s.pad_w < wp ? s.pad_w : wp) : wp;
          const int hi = ih >= 0 && ih < H ? (s.pad_w + W < wp ? s.pad_w + W : wp) : wp;
          for (int x = 0; x < lo; ++x) dst[x] = T(0);
          if (lo < hi) {
            const T* src = &in(n, g * cin_g + ic, ih, 0) - s.pad_w;
            for (int x = lo; x < hi; ++x) dst[x] = src[x];
          }
          for (int x = hi; x < wp; ++x) dst[x] = T(0);
        });
        m.team_barrier();
        const T* rp = &rows(0);
        const T* wg = w.data();
        const int nr = OH - oh0 < R ? OH - oh0 : R;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, nr * ntiles_c * nwb), [&](const int t) {
          const int lo = t / (ntiles_c * nwb), ob = (t / nwb) % ntiles_c, ow0 = (t % nwb) * WB;
          const int oh = oh0 + lo, r0 = lo * s.stride;
          // Width and first channel of channel tile ob.
          int width = OCB, oc0 = g * cout_g + ob * OCB;
          if (ob >= nob) {  // tiles of the remainder, in order: [4] [2] [1]
            const int k = ob - nob, has4 = rem >= 4 ? 1 : 0, has2 = (rem & 3) >= 2 ? 1 : 0;
            int off = nob * OCB;
            if (k < has4) {
              width = 4;
            } else if (k < has4 + has2) {
              width = 2, off += 4 * has4;
            } else {
              width = 1, off += 4 * has4 + 2 * has2;
            }
            oc0 = g * cout_g + off;
          }
          if (s1)
            detail::direct_dispatch<T, OCB, WB, true>(width, s, rp, ic_stride, wp, r0, wg, b, out, n, oc0, oh, ow0, OW);
          else
            detail::direct_dispatch<T, OCB, WB, false>(width, s, rp, ic_stride, wp, r0, wg, b, out, n, oc0, oh, ow0,
                                                       OW);
        });
      });
}

}  // namespace sp::conv
