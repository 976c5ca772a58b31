#pragma once
// Depthwise convolution (groups = C_in = C_out: one k_h x k_w filter per
// channel), NCHW, any kernel size, stride and padding, bias and activation
// fused. One source for every back end.
//
// A depthwise layer does 2 k_h k_w FLOPs per output element against 8 bytes
// of compulsory traffic (one input and one output element): memory-bound
// unless its data sit in cache, so the kernel reads the input once, where it
// lies, and spends few instructions per element. The general direct kernel
// (conv_direct.hpp) is poor here: its channel tile is 1 wide, and it first
// copies every plane into padded scratch.
//
// Work item = one (n, c) plane (a plain RangePolicy: each thread streams
// through whole planes). The input is read in place, no copy: output rows
// whose k_h taps all fall inside the plane go RB at a time, and their
// columns whose k_w taps fall inside go in WB-wide strips, an RB x WB
// register tile each (CPU: 6 rows x 16 fp32, six independent FMA chains
// of one AVX-512 register; 3x3 taps unrolled at compile time): no bound
// test in that loop, which does nearly all the work. A last block of rows
// or strip of columns shorter than the tile slides back to end at the
// interior's edge (it recomputes a few outputs of its neighbour and stores
// them again, same value, same thread), so every interior store is a whole
// vector. The edge columns (one per padding column) go one at a time with
// their taps cut to the plane; the edge rows one at a time with their tap
// rows cut. A plane whose interior is narrower than WB goes column by column.
//
// The commonest layer, 3x3 stride 1 with one column of padding each side
// (MobileNet's), has its own path (dw_plane3_padded): blocks of RB3 = 7 rows
// from row 0 and strips from column 0, whose lanes and rows that fall on the
// padding read zero under a mask or are skipped at compile time, so no column
// or row goes one at a time, and a 56-wide row is 3 strips of 16 and one of 8
// with nothing computed twice. On a cache-resident 4 x 64 x 56 x 56 layer
// (2 threads, development VM) it took the kernel from 142.6 us (45% of the
// FMA peak) to 88.5 us (72%).
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "kernels/conv/conv_views.hpp"
#include "kernels/gemm/gemm_tiled.hpp"  // SP_UNROLL

#if defined(_OPENMP) && !defined(__CUDA_ARCH__)
#define SP_DW_SIMD _Pragma("omp simd")
#else
#define SP_DW_SIMD
#endif

// The 3x3 strips are kept out of line on the host: inlined into the plane loop (four strips and the
// row loop around them), GCC 12 ran short of registers and reloaded each input vector from memory
// for every FMA (110 loads for 216 FMAs per six rows instead of ~60): 119 us against 103 us on the
// 4 x 64 x 56 x 56 layer (2 threads, this project's development VM).
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
#define SP_DW_NOINLINE __attribute__((noinline))
#else
#define SP_DW_NOINLINE
#endif

// AVX2 without AVX-512 (16 vector registers): the 3x3 padded fp32 strip is written with intrinsics
// (dw_strip3_padded_avx2). As plain loops, GCC 12 held all nine weights and the seven accumulators in
// registers and passed every input vector through the stack in 16-byte halves (a store-forwarding
// stall per load). See host_avx2.hpp for where it applies.
#include "kernels/conv/host_avx2.hpp"
#include "scaleproof/host.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::conv {

template <class T, class Space = Kokkos::DefaultExecutionSpace>
struct DepthwiseTiles {
  static constexpr int RB = 6;  // output rows per register tile (and per item)
  // Output columns: one vector register (AVX-512: 64 bytes, AVX2: 32). The 3x3 padded tile holds RB3
  // accumulators and three shifted input vectors: 10 registers. Two vectors per row would need 20 of
  // AVX2's 16 and GCC then kept accumulators on the stack.
  static constexpr int WB = sp::kernels::GemmTiles<T, Space>::VEC / static_cast<int>(sizeof(T));
  static constexpr int RB3 = 7;  // rows per 3x3 padded block: 56, 28, 14, 7 (MobileNet, ResNet) are multiples
};

#ifdef KOKKOS_ENABLE_CUDA
template <class T>
struct DepthwiseTiles<T, Kokkos::Cuda> {
  static constexpr int RB = 1, WB = 4, RB3 = 1;
};
#endif

// The depthwise kernel applies to groups == C_in == C_out (channel multiplier 1).
inline bool depthwise_applies(const ConvSpec& s) { return s.groups == s.c_in && s.groups == s.c_out; }

namespace detail {

// One tap of weight wv: acc[r][j] += wv * x[(r*stride) * W + j*stride] for the RR x WB tile.
template <class T, int RR, int WB, bool S1>
KOKKOS_FORCEINLINE_FUNCTION void dw_tap(const T* x, int W, int st, T wv, T (&acc)[RR][WB]) {
  SP_UNROLL for (int r = 0; r < RR; ++r) {
    const T* xr = x + r * st * W;
    SP_DW_SIMD
    for (int j = 0; j < WB; ++j) acc[r][j] += wv * xr[S1 ? j : j * st];
  }
}

// acc[r][j] = sum over taps (kr0 <= kr < kr1, kc0 <= kc < kc1) of
//   w[kr][kc] * x[ih0 + r*stride + kr][iw0 + j*stride + kc], every load inside the plane.
// K > 0: a K x K kernel, the tap loops unrolled. Full: all K x K taps (kr0 = kc0 = 0, kr1 = kc1 = K).
template <class T, int RR, int WB, int K, bool S1, bool Full>
KOKKOS_FORCEINLINE_FUNCTION void dw_tile(const T* plane, int W, int ih0, int iw0, int stride, int kr0, int kr1, int kc0,
                                         int kc1, int kw, const T* w, T (&acc)[RR][WB]) {
  SP_UNROLL for (int r = 0; r < RR; ++r) SP_UNROLL for (int j = 0; j < WB; ++j) acc[r][j] = T(0);
  const int st = S1 ? 1 : stride;
  const T* x0 = plane + ih0 * W + iw0;
  if constexpr (K > 0 && Full && S1) {
    // Input row ir, shifted by kc, is loaded once and serves every output row r it is a tap of (kr = ir - r).
    SP_UNROLL for (int ir = 0; ir < RR + K - 1; ++ir) SP_UNROLL for (int kc = 0; kc < K; ++kc) {
      T v[WB];
      const T* xr = x0 + ir * W + kc;
      SP_DW_SIMD
      for (int j = 0; j < WB; ++j) v[j] = xr[j];
      SP_UNROLL for (int r = 0; r < RR; ++r) {
        const int kr = ir - r;
        if (kr < 0 || kr >= K) continue;
        const T wv = w[kr * K + kc];
        SP_DW_SIMD
        for (int j = 0; j < WB; ++j) acc[r][j] += wv * v[j];
      }
    }
  } else if constexpr (K > 0 && Full) {
    SP_UNROLL for (int kr = 0; kr < K; ++kr) SP_UNROLL for (int kc = 0; kc < K; ++kc)
        dw_tap<T, RR, WB, S1>(x0 + kr * W + kc, W, st, w[kr * K + kc], acc);
  } else if constexpr (K > 0) {  // edge rows or columns: unrolled taps, the ones outside the plane skipped
    SP_UNROLL for (int kr = 0; kr < K; ++kr) SP_UNROLL for (int kc = 0; kc < K; ++kc) {
      if (kr < kr0 || kr >= kr1 || kc < kc0 || kc >= kc1) continue;
      dw_tap<T, RR, WB, S1>(x0 + kr * W + kc, W, st, w[kr * K + kc], acc);
    }
  } else {
    const int kwn = K ? K : kw;
    for (int kr = kr0; kr < kr1; ++kr)
      for (int kc = kc0; kc < kc1; ++kc) dw_tap<T, RR, WB, S1>(x0 + kr * W + kc, W, st, w[kr * kwn + kc], acc);
  }
}

// d[j] = act(acc[j] + bias) for j < jmax; vectorized when the strip is whole (sigmoid stays scalar).
template <class T, int WB>
KOKKOS_FORCEINLINE_FUNCTION void dw_store(T* d, const T (&acc)[WB], T bias, Act act, int jmax) {
  if (jmax == WB && act == Act::none) {
    SP_DW_SIMD
    for (int j = 0; j < WB; ++j) d[j] = acc[j] + bias;
  } else if (jmax == WB && act == Act::relu) {
    SP_DW_SIMD
    for (int j = 0; j < WB; ++j) {
      const T v = acc[j] + bias;
      d[j] = v > T(0) ? v : T(0);
    }
  } else {
    for (int j = 0; j < jmax; ++j) d[j] = activate(acc[j] + bias, act);
  }
}

// Output rows [oh, oh + RR), columns [ow0, ow0 + WB) (stored: jmax of them), tap rows [kr0, kr1);
// Edge: the strip is one column whose taps are cut to the columns inside the plane.
template <class T, int RR, int WB, int K, bool S1, bool Full>
KOKKOS_FORCEINLINE_FUNCTION void dw_strip(const ConvSpec& s, const T* plane, int W, int oh, int kr0, int kr1,
                                          const T* w, T bias, T* out_plane, int OW, int ow0, int jmax) {
  T acc[RR][WB];
  const int iw0 = ow0 * s.stride - s.pad_w, kw = K ? K : s.kw;
  int kc0 = 0, kc1 = kw;
  if (!Full) kc0 = iw0 < 0 ? -iw0 : 0, kc1 = W - iw0 < kw ? W - iw0 : kw;  // WB == 1 when columns are cut
  dw_tile<T, RR, WB, K, S1, Full>(plane, W, oh * s.stride - s.pad_h, iw0, s.stride, kr0, kr1, kc0, kc1, s.kw, w, acc);
  T* d = out_plane + oh * OW + ow0;
  if (jmax == WB && s.act == Act::none) {  // the common case: one branch per tile, not per row
    SP_UNROLL for (int r = 0; r < RR; ++r) {
      SP_DW_SIMD
      for (int j = 0; j < WB; ++j) d[r * OW + j] = acc[r][j] + bias;
    }
  } else {
    SP_UNROLL for (int r = 0; r < RR; ++r) dw_store<T, WB>(d + r * OW, acc[r], bias, s.act, jmax);
  }
}

// Output rows [oh, oh + RR), every column; Full: rows whose taps all lie inside the plane (else RR = 1 and
// tap rows [kr0, kr1)). Columns [lo, hi) have every tap inside: WB-wide strips, the last one slid back to end
// at hi (it recomputes a few columns of its neighbour, stored again with the same value by this thread).
// Edge columns, and every column of a plane whose interior is narrower than WB, go one at a time with
// their taps cut to the plane.
template <class T, int RR, int WB, int K, bool S1, bool Full>
KOKKOS_FORCEINLINE_FUNCTION void dw_rows(const ConvSpec& s, const T* plane, int W, int oh, int kr0, int kr1, const T* w,
                                         T bias, T* out_plane, int OW, int lo, int hi) {
  if (hi - lo < WB) lo = hi = OW;  // narrow: every column one at a time
  for (int ow = 0; ow < lo; ++ow)
    dw_strip<T, RR, 1, K, S1, false>(s, plane, W, oh, kr0, kr1, w, bias, out_plane, OW, ow, 1);
  for (int ow0 = lo; ow0 < hi; ow0 += WB) {
    const int o = ow0 + WB <= hi ? ow0 : hi - WB;
    dw_strip<T, RR, WB, K, S1, Full>(s, plane, W, oh, kr0, kr1, w, bias, out_plane, OW, o, WB);
  }
  for (int ow = hi; ow < OW; ++ow)
    dw_strip<T, RR, 1, K, S1, false>(s, plane, W, oh, kr0, kr1, w, bias, out_plane, OW, ow, 1);
}

// 3x3, stride 1, column padding 1 (OW == W): output rows [oh, oh + RR) (input rows from ih0), columns
// [o, o + SW). The strip may start at column 0 (Left: lane 0's left tap is the padding) or end at OW
// (Right: the last lane's right tap is); those lanes read zero instead, under a mask, so no column
// goes scalar (scalar edge columns took 15-20% of a 56-wide plane). The right lane's index is hidden
// from the optimizer: as a constant, GCC splits the loop and copies the vector through the stack (a
// store-forwarding stall per load, slower than the scalar columns); as a runtime value it becomes one
// loop-invariant mask register. Cut, for the blocks at the top and bottom of the plane, says which
// input rows are row padding and skipped: kCutFirst / kCutLast (row padding 1: the top block's first
// row, the bottom block's last one, fixed at compile time so those blocks cost what the others do;
// a runtime test of every row made them twice as slow), or kCutRuntime (rows outside [0, H)).
constexpr int kCutNone = 0, kCutFirst = 1, kCutLast = 2, kCutRuntime = 4;

// The largest block (RB3 rows x W columns) that dw_plane3_padded streams out through a stack buffer.
constexpr int kStreamBufElems = 4096;

#ifdef SP_HOST_AVX2
// dw_strip3_padded for fp32 strips of one AVX2 register (8 columns). The filter column kc is the outer
// loop: its three weights, the RR accumulators and one input vector are live at a time (RR + 4
// registers), and each (input row, shift) vector is loaded once and feeds every output row it is a tap
// of. The padding lanes are masked loads (a masked lane reads nothing and is zero).
template <int RR, bool Left, bool Right, int Cut>
__attribute__((noinline)) void dw_strip3_padded_avx2(const float* plane, int H, int W, int oh, int ih0, int o,
                                                     const float* w, float bias, float* out_plane, Act act) {
  __m256 acc[RR];
  SP_UNROLL for (int r = 0; r < RR; ++r) acc[r] = _mm256_setzero_ps();
  const __m256i not_first = _mm256_setr_epi32(0, -1, -1, -1, -1, -1, -1, -1);
  const __m256i not_last = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, -1, 0);
  const float* base = plane + int64_t(ih0) * W + o - 1;  // lane j of shift kc, input row ir: base[ir * W + kc + j]
  SP_UNROLL for (int kc = 0; kc < 3; ++kc) {
    const __m256 w0 = _mm256_broadcast_ss(w + kc), w1 = _mm256_broadcast_ss(w + 3 + kc),
                 w2 = _mm256_broadcast_ss(w + 6 + kc);
    SP_UNROLL for (int ir = 0; ir < RR + 2; ++ir) {
      if ((Cut & kCutFirst) && ir == 0) continue;
      if ((Cut & kCutLast) && ir == RR + 1) continue;
      if ((Cut & kCutRuntime) && (ih0 + ir < 0 || ih0 + ir >= H)) continue;
      const float* xr = base + int64_t(ir) * W + kc;
      const __m256 v = Left && kc == 0    ? _mm256_maskload_ps(xr, not_first)
                       : Right && kc == 2 ? _mm256_maskload_ps(xr, not_last)
                                          : _mm256_loadu_ps(xr);
      // Output row r takes input row ir through filter row kr = ir - r.
      if (ir < RR) acc[ir] = _mm256_fmadd_ps(w0, v, acc[ir]);
      if (ir >= 1 && ir - 1 < RR) acc[ir - 1] = _mm256_fmadd_ps(w1, v, acc[ir - 1]);
      if (ir >= 2) acc[ir - 2] = _mm256_fmadd_ps(w2, v, acc[ir - 2]);
    }
  }
  float* d = out_plane + int64_t(oh) * W + o;
  const __m256 b = _mm256_set1_ps(bias);
  SP_UNROLL for (int r = 0; r < RR; ++r) {
    __m256 y = _mm256_add_ps(acc[r], b);
    if (act == Act::relu) y = _mm256_max_ps(y, _mm256_setzero_ps());
    if (act != Act::sigmoid) {
      _mm256_storeu_ps(d + int64_t(r) * W, y);
    } else {
      alignas(32) float a[8];
      _mm256_store_ps(a, acc[r]);
      for (int j = 0; j < 8; ++j) d[int64_t(r) * W + j] = activate(a[j] + bias, act);
    }
  }
}
#endif

template <class T, int RR, int SW, bool Left, bool Right, int Cut>
SP_DW_NOINLINE KOKKOS_FUNCTION void dw_strip3_padded(const T* plane, int H, int W, int oh, int ih0, int o, const T* w,
                                                     T bias, T* out_plane, Act act) {
#ifdef SP_HOST_AVX2
  if constexpr (std::is_same<T, float>::value && SW == 8) {
    dw_strip3_padded_avx2<RR, Left, Right, Cut>(plane, H, W, oh, ih0, o, w, bias, out_plane, act);
    return;
  }
#endif
  T acc[RR][SW];
  SP_UNROLL for (int r = 0; r < RR; ++r) SP_UNROLL for (int j = 0; j < SW; ++j) acc[r][j] = T(0);
  int zr = SW - 1;
#if !defined(__CUDA_ARCH__) && defined(__GNUC__)
  asm("" : "+r"(zr));
#endif
  // Input row ih0 + ir is loaded once at each of its three shifts, and the three vectors serve every
  // output row r it is a tap of (kr = ir - r). The three loads come first: with the loads interleaved
  // with the FMAs (load shift kc, use it, load the next), GCC 12 folded most loads into the FMAs as
  // memory operands, one load per FMA, and the split-line loads then bound the loop, not the FMAs.
  SP_UNROLL for (int ir = 0; ir < RR + 2; ++ir) {
    if ((Cut & kCutFirst) && ir == 0) continue;
    if ((Cut & kCutLast) && ir == RR + 1) continue;
    if ((Cut & kCutRuntime) && (ih0 + ir < 0 || ih0 + ir >= H)) continue;
    T v[3][SW];
    const T* xr = plane + (ih0 + ir) * W + o - 1;
    SP_UNROLL for (int kc = 0; kc < 3; ++kc) {
      SP_DW_SIMD
      for (int j = 0; j < SW; ++j)
        v[kc][j] = (Left && kc == 0 && j == 0) || (Right && kc == 2 && j == zr) ? T(0) : xr[kc + j];
    }
    SP_UNROLL for (int r = 0; r < RR; ++r) {
      const int kr = ir - r;
      if (kr < 0 || kr >= 3) continue;
      SP_UNROLL for (int kc = 0; kc < 3; ++kc) {
        const T wv = w[kr * 3 + kc];
        SP_DW_SIMD
        for (int j = 0; j < SW; ++j) acc[r][j] += wv * v[kc][j];
      }
    }
  }
  T* d = out_plane + oh * W + o;
  if (act == Act::none) {
    SP_UNROLL for (int r = 0; r < RR; ++r) {
      SP_DW_SIMD
      for (int j = 0; j < SW; ++j) d[r * W + j] = acc[r][j] + bias;
    }
  } else {
    SP_UNROLL for (int r = 0; r < RR; ++r) dw_store<T, SW>(d + r * W, acc[r], bias, act, SW);
  }
}

// Rows [oh, oh + RR) of a 3x3 stride-1 plane with column padding 1 (OW == W >= WB + 2), every column:
// WB-wide strips from column 0, then the remainder as one WB/2-wide strip when it fits in one (56 =
// 3 x 16 + 8 for fp32: no column computed twice), else a WB-wide strip slid back to end at OW.
template <class T, int RR, int WB, int Cut>
KOKKOS_FORCEINLINE_FUNCTION void dw_rows3_padded(const T* plane, int H, int W, int oh, int ih0, const T* w, T bias,
                                                 T* out_plane, Act act) {
  const int full = W / WB, rem = W - full * WB;
  const int last_full = rem == 0 ? full - 1 : full;  // strips [0, last_full) have no right-padding lane
  dw_strip3_padded<T, RR, WB, true, false, Cut>(plane, H, W, oh, ih0, 0, w, bias, out_plane, act);
  for (int i = 1; i < last_full; ++i)
    dw_strip3_padded<T, RR, WB, false, false, Cut>(plane, H, W, oh, ih0, i * WB, w, bias, out_plane, act);
  if (rem == 0 || rem > WB / 2)
    dw_strip3_padded<T, RR, WB, false, true, Cut>(plane, H, W, oh, ih0, W - WB, w, bias, out_plane, act);
  else
    dw_strip3_padded<T, RR, WB / 2, false, true, Cut>(plane, H, W, oh, ih0, W - WB / 2, w, bias, out_plane, act);
}

// A whole 3x3 stride-1 plane with column padding 1: RB3 output rows at a time from row 0, the last
// block slid back to end at OH; the blocks whose input rows reach the row padding skip those rows.
// A plane of fewer than RB3 output rows goes row by row.
// Stream (host AVX2 fp32 only): each block is computed into a stack buffer and copied out with
// non-temporal stores (stream_copy), as one contiguous run of RB3 rows; storing the strips' vectors
// non-temporally where they lie leaves RB3 half-written lines open per strip, more than the write-
// combining buffers hold, and was slower than cached stores.
template <class T, int RB3, int WB>
KOKKOS_FORCEINLINE_FUNCTION void dw_plane3_padded(const T* plane, int H, int W, int OH, int pad_h, const T* w, T bias,
                                                  T* out_plane, Act act, bool stream) {
  if (OH < RB3) {
    for (int oh = 0; oh < OH; ++oh)
      dw_rows3_padded<T, 1, WB, kCutRuntime>(plane, H, W, oh, oh - pad_h, w, bias, out_plane, act);
    return;
  }
#ifdef SP_HOST_AVX2
  alignas(64) T buf[std::is_same<T, float>::value ? kStreamBufElems : 1];
  stream = stream && std::is_same<T, float>::value && RB3 * W <= kStreamBufElems;
#else
  T* buf = nullptr;
  stream = false;
#endif
  for (int oh0 = 0; oh0 < OH; oh0 += RB3) {
    const int o = oh0 + RB3 <= OH ? oh0 : OH - RB3, ih0 = o - pad_h;
    const bool top = ih0<0, bottom = ih0 + RB3 + 2> H;
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
    // This block's input rows below the two it shares with the block above, and the next block's
    // (into the next plane at the end; a prefetch never faults), asked for at once rather than as
    // the strips reach them: the strips read a block a vector at a time, column by column, so
    // their first touches of a block's lines come one row apart.
    {
      const char* ahead = reinterpret_cast<const char*>(plane + int64_t(ih0 + 2) * W);
      for (int64_t b = 0; b < int64_t(2 * RB3) * W * int64_t(sizeof(T)); b += 64) __builtin_prefetch(ahead + b);
    }
#endif
    T* dst = stream ? buf : out_plane;  // rows [o, o + RB3) of dst: buf holds those rows only
    const int od = stream ? 0 : o;
    if (!top && !bottom)
      dw_rows3_padded<T, RB3, WB, kCutNone>(plane, H, W, od, ih0, w, bias, dst, act);
    else if (pad_h != 1)
      dw_rows3_padded<T, RB3, WB, kCutRuntime>(plane, H, W, od, ih0, w, bias, dst, act);
    else if (!bottom)
      dw_rows3_padded<T, RB3, WB, kCutFirst>(plane, H, W, od, ih0, w, bias, dst, act);
    else if (!top)
      dw_rows3_padded<T, RB3, WB, kCutLast>(plane, H, W, od, ih0, w, bias, dst, act);
    else
      dw_rows3_padded<T, RB3, WB, kCutFirst | kCutLast>(plane, H, W, od, ih0, w, bias, dst, act);
#ifdef SP_HOST_AVX2
    if constexpr (std::is_same<T, float>::value)
      if (stream) stream_copy(out_plane + int64_t(o) * W, buf, int64_t(RB3) * W);
#endif
  }
}

// One output plane: rows [oh_lo, oh_hi) read kh rows inside the plane and go RB at a time (the last
// block slid back, as the strips are); the edge rows above and below go one at a time, their tap
// rows cut to the plane.
template <class T, int RB, int WB, int K, bool S1, int RB3>
KOKKOS_INLINE_FUNCTION void dw_plane(const ConvSpec s, const T* plane, int H, int W, const T* w, T bias, T* out_plane,
                                     int OH, int OW, int oh_lo, int oh_hi, int lo, int hi, bool stream) {
  const int kh = K ? K : s.kh;
  // A K x K filter is copied to the stack: stores to the output can then not alias it, and its
  // values stay in registers across tiles.
  T wk[K > 0 ? K * K : 1];
  if constexpr (K > 0) {
    for (int i = 0; i < K * K; ++i) wk[i] = w[i];
    w = wk;
  }
  // 3x3 stride 1 with one column of padding each side (the common "same" layer): no scalar columns.
  if constexpr (K == 3 && S1) {
    if (s.pad_w == 1 && OW == W && W >= WB + 2)
      return dw_plane3_padded<T, RB3, WB>(plane, H, W, OH, s.pad_h, w, bias, out_plane, s.act, stream);
  }
  auto edge_row = [&](int oh) {
    const int ih0 = oh * s.stride - s.pad_h;
    const int kr0 = ih0 < 0 ? -ih0 : 0, kr1 = H - ih0 < kh ? H - ih0 : kh;
    // One row alone: strips two vectors wide where they fit, for two independent FMA chains.
    if (hi - lo >= 2 * WB)
      dw_rows<T, 1, 2 * WB, K, S1, false>(s, plane, W, oh, kr0, kr1, w, bias, out_plane, OW, lo, hi);
    else
      dw_rows<T, 1, WB, K, S1, false>(s, plane, W, oh, kr0, kr1, w, bias, out_plane, OW, lo, hi);
  };
  if (oh_hi - oh_lo < RB) {
    for (int oh = 0; oh < OH; ++oh) edge_row(oh);
    return;
  }
  for (int oh = 0; oh < oh_lo; ++oh) edge_row(oh);
  for (int oh0 = oh_lo; oh0 < oh_hi; oh0 += RB) {
    const int o = oh0 + RB <= oh_hi ? oh0 : oh_hi - RB;
    dw_rows<T, RB, WB, K, S1, true>(s, plane, W, o, 0, kh, w, bias, out_plane, OW, lo, hi);
  }
  for (int oh = oh_hi; oh < OH; ++oh) edge_row(oh);
}

}  // namespace detail

// How the output is written: automatic streams it (non-temporal stores, where the host path has
// them: fp32 3x3 stride-1 planes with one column of padding) when it is larger than the last-level
// cache, which then could not hand it to the next layer anyway; cached and streamed force one way.
// The values stored are the same either way.
enum class DwStores { automatic, cached, streamed };

// out = act(depthwise(in, w) + b); requires depthwise_applies(s). b may be
// empty when !s.bias. Shapes must already be validated (conv::validate).
// Work item = one (n, c) plane.
template <class T, class Space = Kokkos::DefaultExecutionSpace>
SP_UNIT_LOCAL void conv2d_depthwise(const ConvSpec& s, CTensor<T> in, CTensor<T> w, CVec<T> b, Tensor<T> out,
                                    DwStores stores = DwStores::automatic) {
  constexpr int RB = DepthwiseTiles<T, Space>::RB, WB = DepthwiseTiles<T, Space>::WB;
  constexpr int RB3 = DepthwiseTiles<T, Space>::RB3;
  const int N = static_cast<int>(in.extent(0)), C = static_cast<int>(in.extent(1));
  const int H = static_cast<int>(in.extent(2)), W = static_cast<int>(in.extent(3));
  const int OH = s.out_h(H), OW = s.out_w(W);
  // Interior columns (every tap inside [0, W)): [lo, hi), clamped to [0, OW).
  const int ow_lo = (s.pad_w + s.stride - 1) / s.stride;
  const int ow_hi = W - s.kw + s.pad_w >= 0 ? (W - s.kw + s.pad_w) / s.stride + 1 : 0;
  const int lo = ow_lo < OW ? ow_lo : OW;
  const int hi = ow_hi < lo ? lo : ow_hi < OW ? ow_hi : OW;
  // Interior rows likewise: [oh_lo, oh_hi).
  const int oh_lo0 = (s.pad_h + s.stride - 1) / s.stride;
  const int oh_hi0 = H - s.kh + s.pad_h >= 0 ? (H - s.kh + s.pad_h) / s.stride + 1 : 0;
  const int oh_lo = oh_lo0 < OH ? oh_lo0 : OH;
  const int oh_hi = oh_hi0 < oh_lo ? oh_lo : oh_hi0 < OH ? oh_hi0 : OH;
  const bool s1 = s.stride == 1, k3 = s.kh == 3 && s.kw == 3;
#ifdef SP_HOST_AVX2
  const bool stream = stores == DwStores::streamed ||
                      (stores == DwStores::automatic && double(out.span()) * sizeof(T) > sp::last_level_cache_bytes());
#else
  const bool stream = false;
#endif
  Kokkos::parallel_for(
      "conv2d_depthwise", Kokkos::RangePolicy<Space>(0, int64_t(N) * C), KOKKOS_LAMBDA(const int64_t nc) {
        const int c = static_cast<int>(nc % C);
        const T* plane = in.data() + nc * H * W;
        T* out_plane = out.data() + nc * OH * OW;
        const T* wc = w.data() + int64_t(c) * s.kh * s.kw;
        const T bias = s.bias ? b(c) : T(0);
        if (k3 && s1)
          detail::dw_plane<T, RB, WB, 3, true, RB3>(s, plane, H, W, wc, bias, out_plane, OH, OW, oh_lo, oh_hi, lo, hi,
                                                    stream);
        else if (k3)
          detail::dw_plane<T, RB, WB, 3, false, RB3>(s, plane, H, W, wc, bias, out_plane, OH, OW, oh_lo, oh_hi, lo, hi,
                                                     stream);
        else if (s1)
          detail::dw_plane<T, RB, WB, 0, true, RB3>(s, plane, H, W, wc, bias, out_plane, OH, OW, oh_lo, oh_hi, lo, hi,
                                                    stream);
        else
          detail::dw_plane<T, RB, WB, 0, false, RB3>(s, plane, H, W, wc, bias, out_plane, OH, OW, oh_lo, oh_hi, lo, hi,
                                                     stream);
#ifdef SP_HOST_AVX2
        if (stream) _mm_sfence();  // the plane's non-temporal stores are ordered before the region ends
#endif
      });
}

}  // namespace sp::conv
