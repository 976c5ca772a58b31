#pragma once
// Convolution as im2col followed by a GEMM. The input patches of a chunk of
// images are unrolled into one (C_in * kh * kw) x (OH * OW) matrix per image
// (group g's rows are the K = C_in/g * kh * kw rows from g * K), and one
// launch of the strip GEMM (conv_gemm_strips.hpp) multiplies every (image,
// group) pair of the chunk: the group's weights, a C_out/g x K row-major
// matrix as stored, times the group's rows of the image's matrix, into the
// image's output channels of that group, bias and activation fused. Its
// work items run over images and groups as well as over column strips, and
// there are two launches per chunk, not one per image and group.
//
// The unroll pass: one work item per (image, matrix row), so the index
// arithmetic (divisions) is per matrix row, not per element; in each output
// row the columns whose tap falls inside the input are one loop (a
// contiguous copy at stride 1), the padding columns on either side are zero.
//
// The unrolled matrix costs kh*kw times the input in memory traffic: the
// price of reducing the convolution to a GEMM. A chunk is as many images as
// fit in the caller's workspace (im2col_chunk): sized so that the chunk's
// matrix, written by the unroll pass and read back by the GEMM, can stay in
// the last-level cache between the two.
#include <Kokkos_Core.hpp>

#include "kernels/conv/conv_views.hpp"
#include "kernels/conv/conv_gemm_strips.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::conv {

// Rows x columns of one image's unrolled matrix (all groups).
inline int64_t im2col_rows(const ConvSpec& s) { return int64_t(s.c_in) * s.kh * s.kw; }
inline int64_t im2col_cols(const ConvSpec& s, int h, int w) { return int64_t(s.out_h(h)) * s.out_w(w); }

// Workspace budget for one chunk's unrolled matrices: a share of a last-level
// cache of 32 MiB that leaves room for the input and output the two passes
// also touch (the unroll reads the input, the GEMM writes the output).
constexpr int64_t kIm2colChunkBytes = int64_t(16) << 20;

// Images unrolled per pass for an N-image batch of h x w inputs: as many as
// fit in kIm2colChunkBytes, at least one, at most N. The workspace the caller
// allocates is im2col_chunk(...) * im2col_rows(s) * im2col_cols(s, h, w) elements.
template <class T>
int im2col_chunk(const ConvSpec& s, int n, int h, int w) {
  const int64_t per = im2col_rows(s) * im2col_cols(s, h, w) * int64_t(sizeof(T));
  const int64_t fit = per > 0 ? kIm2colChunkBytes / per : n;
  return static_cast<int>(fit < 1 ? 1 : fit > n ? n : fit);
}

// out = act(conv(in, w) + b). col: the workspace, any shape, at least one
// image's matrix (im2col_rows * im2col_cols elements); its size sets the
// images per chunk. b may be empty when !s.bias. Shapes must already be
// validated (conv::validate).
template <class T, class Space = Kokkos::DefaultExecutionSpace>
SP_UNIT_LOCAL void conv2d_im2col(const ConvSpec& s, CTensor<T> in, CTensor<T> w, CVec<T> b, Tensor<T> out,
                                 Kokkos::View<T**, Kokkos::LayoutRight> col) {
  const int N = static_cast<int>(in.extent(0)), H = static_cast<int>(in.extent(2)), W = static_cast<int>(in.extent(3));
  const int OH = s.out_h(H), OW = s.out_w(W), G = s.groups;
  const int K = s.cin_g() * s.kh * s.kw, cout_g = s.cout_g(), P = OH * OW;
  const int rows = s.c_in * s.kh * s.kw, Co = s.c_out;
  const int64_t per_image = int64_t(rows) * P;
  const int64_t fit = static_cast<int64_t>(col.size()) / per_image;
  const int chunk = static_cast<int>(fit < N ? fit : N);
  if (chunk < 1) Kokkos::abort("conv2d_im2col: the workspace holds less than one image's unrolled matrix");
  const int kh = s.kh, kw = s.kw, st = s.stride, ph = s.pad_h, pw = s.pad_w;
  T* colp = col.data();
  for (int n0 = 0; n0 < N; n0 += chunk) {
    const int nb = N - n0 < chunk ? N - n0 : chunk;
    // col[i][(ic * kh + r) * kw + c][oh * OW + ow] = padded input (n0 + i, ic, oh*stride - pad_h + r, ow*stride - pad_w
    // + c)
    Kokkos::parallel_for(
        "conv_im2col", Kokkos::RangePolicy<Space>(0, int64_t(nb) * rows), KOKKOS_LAMBDA(const int64_t item) {
          const int row = static_cast<int>(item % rows), i = static_cast<int>(item / rows);
          const int c = row % kw, r = (row / kw) % kh, ic = row / (kw * kh);
          // Columns [lo, hi) read inside the input row: iw = ow * stride - off in [0, W).
          const int off = pw - c;
          int lo = off > 0 ? (off + st - 1) / st : 0;
          int hi = W - 1 + off >= 0 ? (W - 1 + off) / st + 1 : 0;
          if (lo > OW) lo = OW;
          if (hi > OW) hi = OW;
          if (hi < lo) hi = lo;
          const T* plane = &in(n0 + i, ic, 0, 0);
          T* dst = colp + item * P;
          for (int oh = 0; oh < OH; ++oh, dst += OW) {
            const int ih = oh * st - ph + r;
            if (ih < 0 || ih >= H) {
              for (int ow = 0; ow < OW; ++ow) dst[ow] = T(0);
              continue;
            }
            const T* src = plane + int64_t(ih) * W;
            for (int ow = 0; ow < lo; ++ow) dst[ow] = T(0);
            if (st == 1) {
              for (int ow = lo; ow < hi; ++ow) dst[ow] = src[ow - off];
            } else {
              for (int ow = lo; ow < hi; ++ow) dst[ow] = src[ow * st - off];
            }
            for (int ow = hi; ow < OW; ++ow) dst[ow] = T(0);
          }
        });
    // Y[i][g] = act(W[g] col[i][g] + b[g]) for every image i of the chunk and group g, bias and
    // activation fused into the store.
    StripGemm d;
    d.M = cout_g, d.K = K, d.P = P, d.G = G;
    d.w_g = int64_t(cout_g) * K, d.x_n = per_image, d.x_g = int64_t(K) * P;
    d.y_n = int64_t(Co) * P, d.y_g = int64_t(cout_g) * P;
    strip_gemm<T, Space>("conv_im2col_gemm", nb, d, w.data(), colp, s.bias ? b.data() : nullptr,
                         out.data() + int64_t(n0) * Co * P, s.act);
  }
}

}  // namespace sp::conv
