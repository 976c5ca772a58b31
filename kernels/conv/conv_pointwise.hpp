#pragma once
// Pointwise (1 x 1, stride 1, no padding, one group) convolution as one GEMM
// per image: out[n] (C_out x HW) = W (C_out x C_in) * in[n] (C_in x HW),
// all three row-major as they lie in memory (NCHW activations, OIHW
// weights), with bias and activation fused into the store. One source for
// every back end.
//
// Work item = one NR-column strip of one image (a plain RangePolicy over
// (n, strip)); for each MR-channel block of outputs an MR x NR register tile
// (CPU: 8 x 32 fp32 = 16 AVX-512 registers, the shape of the project's GEMM
// micro-kernel, kernels/gemm/gemm_tiled.hpp) accumulates over C_in. Nothing
// is packed: per k the NR inputs are one contiguous row segment of the
// image, and the MR weights are scalar broadcasts from W's rows (which stay
// in L1/L2 across items). The C_in x NR input strip is read from memory once
// and stays in L1 while every output-channel block reuses it.
// Tails: a last channel block narrower than MR recomputes the last valid row
// in its spare rows and stores only the valid ones; a last strip narrower
// than NR slides left to end at HW (recomputing columns of the previous
// strip, stored only once). Only an image with HW < NR uses masked loads.
#include <Kokkos_Core.hpp>

#include "kernels/conv/conv_views.hpp"
#include "kernels/gemm/gemm_tiled.hpp"  // SP_UNROLL, SP_MICROKERNEL_ATTR

// A software prefetch hint on host compilers that have one; nothing elsewhere.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__)
#define SP_PREFETCH(p) __builtin_prefetch(p)
#else
#define SP_PREFETCH(p)
#endif

namespace sp::conv {

// The host tile is the GEMM micro-kernel's (two vector registers per row).
template <class T, class Space = Kokkos::DefaultExecutionSpace>
struct PointwiseTiles {
  static constexpr int MR = sp::kernels::GemmTiles<T, Space>::MR;
  static constexpr int NR = sp::kernels::GemmTiles<T, Space>::NR;
};

#ifdef KOKKOS_ENABLE_CUDA
template <class T>
struct PointwiseTiles<T, Kokkos::Cuda> {
  static constexpr int MR = 4, NR = 4;
};
#endif

// The pointwise kernel applies to a 1 x 1, stride 1, unpadded, ungrouped layer.
inline bool pointwise_applies(const ConvSpec& s) {
  return s.kh == 1 && s.kw == 1 && s.stride == 1 && s.pad_h == 0 && s.pad_w == 0 && s.groups == 1;
}

namespace detail {

// acc[r][c] = sum over k < K of w[r * ws + k] * x[k * xs + c]; Full: all NR columns
// exist, else only c < nc (masked loads).
template <class T, int MR, int NR, bool Full>
KOKKOS_INLINE_FUNCTION SP_MICROKERNEL_ATTR void pw_micro(int K, const T* __restrict w, int ws, int mr,
                                                         const T* __restrict x, int xs, int nc, T (&acc)[MR][NR]) {
  const T* wr[MR];
  SP_UNROLL for (int r = 0; r < MR; ++r) wr[r] = w + (r < mr ? r : mr - 1) * ws;  // spare rows repeat the last
  SP_UNROLL for (int r = 0; r < MR; ++r) SP_UNROLL for (int c = 0; c < NR; ++c) acc[r][c] = 0;
  for (int k = 0; k < K; ++k) {
    const T* xk = x + k * xs;
    T xv[NR];
    SP_UNROLL for (int c = 0; c < NR; ++c) xv[c] = Full || c < nc ? xk[c] : T(0);
    SP_UNROLL for (int r = 0; r < MR; ++r) {
      const T a = wr[r][k];
      SP_UNROLL for (int c = 0; c < NR; ++c) acc[r][c] += a * xv[c];
    }
  }
}

template <class T, int MR, int NR, bool Full>
KOKKOS_INLINE_FUNCTION void pw_block(const ConvSpec& s, const T* w, const T* b, int mr, const T* x, int HW, int nc,
                                     int c_lo, T* out) {
  T acc[MR][NR];
  pw_micro<T, MR, NR, Full>(s.c_in, w, s.c_in, mr, x, HW, nc, acc);
  for (int r = 0; r < mr; ++r) {
    const T bo = s.bias ? b[r] : T(0);
    T* d = out + int64_t(r) * HW;
    if (s.act == Act::none)
      for (int c = c_lo; c < nc; ++c) d[c] = acc[r][c] + bo;
    else
      for (int c = c_lo; c < nc; ++c) d[c] = activate(acc[r][c] + bo, s.act);
  }
}

}  // namespace detail

// out = act(W * in + b) per image; requires pointwise_applies(s). b may be
// empty when !s.bias. Shapes must already be validated (conv::validate).
template <class T, class Space = Kokkos::DefaultExecutionSpace>
void conv2d_pointwise(const ConvSpec& s, CTensor<T> in, CTensor<T> w, CVec<T> b, Tensor<T> out) {
  constexpr int MR = PointwiseTiles<T, Space>::MR, NR = PointwiseTiles<T, Space>::NR;
  const int N = static_cast<int>(in.extent(0));
  const int HW = static_cast<int>(in.extent(2)) * static_cast<int>(in.extent(3));
  const int nstrips = (HW + NR - 1) / NR, Ci = s.c_in, Co = s.c_out;
  Kokkos::parallel_for(
      "conv2d_pointwise", Kokkos::RangePolicy<Space>(0, int64_t(N) * nstrips), KOKKOS_LAMBDA(const int64_t item) {
        const int n = static_cast<int>(item / nstrips), strip = static_cast<int>(item % nstrips);
        const T* x = in.data() + int64_t(n) * Ci * HW;
        T* y = out.data() + int64_t(n) * Co * HW;
        const T* bp = s.bias ? b.data() : nullptr;
        int j0 = strip * NR, c_lo = 0;
        if (HW < NR) {  // one narrow strip: masked loads
          for (int o0 = 0; o0 < Co; o0 += MR)
            detail::pw_block<T, MR, NR, false>(s, w.data() + int64_t(o0) * Ci, bp ? bp + o0 : bp,
                                               Co - o0 < MR ? Co - o0 : MR, x, HW, HW, 0, y + int64_t(o0) * HW);
          return;
        }
        if (j0 + NR > HW) c_lo = j0 - (HW - NR), j0 = HW - NR;  // last strip slides left; stores its new columns only
        // Ask for the next strip of the image while this one computes (C_in rows, HW apart),
        // a share of its rows before each channel block.
        const bool pf = j0 + 3 * NR <= HW;
        const int nob = (Co + MR - 1) / MR, kper = (Ci + nob - 1) / nob;
        for (int o0 = 0, ob = 0; o0 < Co; o0 += MR, ++ob) {
          if (pf)
            for (int k = ob * kper; k < Ci && k < (ob + 1) * kper; ++k)
              for (int c = 0; c < NR; c += 64 / static_cast<int>(sizeof(T)))
                SP_PREFETCH(x + int64_t(k) * HW + j0 + 2 * NR + c);
          detail::pw_block<T, MR, NR, true>(s, w.data() + int64_t(o0) * Ci, bp ? bp + o0 : bp,
                                            Co - o0 < MR ? Co - o0 : MR, x + j0, HW, NR, c_lo,
                                            y + int64_t(o0) * HW + j0);
        }
      });
}

}  // namespace sp::conv
