#pragma once
// The product both the pointwise and the im2col convolutions reduce to:
// for each image n and group g,
//   Y[n][g] (M x P) = act(W[g] (M x K) * X[n][g] (K x P) + b[g]),
// all three row-major where they lie (W: OIHW weights, row stride K; X:
// an image's channels or its unrolled im2col matrix, row stride P; Y: the
// output channels, row stride P), bias and activation fused into the store.
// One source for every back end.
//
// Work item = one NR-column strip of one (image, group) product (a plain
// RangePolicy); for each MR-row block of Y an MR x NR register tile
// accumulates over K: per k one contiguous NR-wide row segment of X and MR
// scalar weights broadcast from W's rows (which stay in L1/L2 across
// items). The strip of X is read from memory once: each KC x NR slice of
// it stays in L1 while every row block reads it in place. MR is the GEMM
// micro-kernel's (kernels/gemm/gemm_tiled.hpp), NR is StripTiles'; a last
// row block of at most MR - 2 rows takes an (MR - 2)-row tile.
// Tails: a last row block narrower than its tile recomputes the last valid
// row in its spare rows and stores only the valid ones; a last strip narrower
// than NR slides left to end at P (recomputing columns of the previous
// strip, stored only once). Only a product with P < NR uses masked loads.
//
// Each output element is a sum over k = 0 .. K-1 in order, slice by slice
// (KC terms summed from 0, then added to the partial sum of the previous
// slices), then + bias: one of the orders the error bound of
// reference/conv covers (any order), fixed by KC alone.
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "kernels/conv/conv_views.hpp"
#include "kernels/gemm/gemm_tiled.hpp"  // SP_UNROLL, SP_MICROKERNEL_ATTR, GemmTiles

// A software prefetch hint into L2 (read, moderate temporal locality) on host compilers that have
// one; nothing elsewhere.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__)
#define SP_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
#else
#define SP_PREFETCH_L2(p)
#endif

// AVX2 without AVX-512 has 16 vector registers: the 12 accumulators of the
// 6 x 16 fp32 tile, two row segments of X and one broadcast weight fill 15.
// Written as plain loops, GCC 12 broadcast all six weights first and kept
// three accumulators on the stack (a load and a store each per k). On such
// host builds the tile is written with intrinsics, one weight live at a time;
// AVX-512 hosts (32 registers) run the same code on 512-bit vectors, three
// per row of the tile (StripTiles). See
// host_avx2.hpp and host_avx512.hpp for where each applies.
#include "kernels/conv/host_avx2.hpp"
#include "kernels/conv/host_avx512.hpp"
#include "scaleproof/kokkos_compat.hpp"

namespace sp::conv {

template <class T, class Space = Kokkos::DefaultExecutionSpace>
struct StripTiles {
  static constexpr int MR = sp::kernels::GemmTiles<T, Space>::MR;
#if defined(SP_HOST_AVX512)
  // 32 vector registers: an MR x 3-vector accumulator tile (24 at MR = 8), three row segments of X
  // and one broadcast weight. Per k, 3 + MR loads feed 3 MR FMAs: 0.46 loads per FMA at MR = 8,
  // against 0.63 with the GEMM's two-vector rows, so the loads of X and W keep pace with the FMAs.
  static constexpr int NR = 3 * 64 / static_cast<int>(sizeof(T));
#else
  static constexpr int NR = sp::kernels::GemmTiles<T, Space>::NR;
#endif
  // K is walked in slices of KC rows of X: a KC x NR slice of a strip (12 KiB at NR = 48 fp32)
  // stays in L1 while every row block of the strip reads it in place, next to W's rows. Over a
  // whole K = 576 strip (im2col's 3x3 x 64) it would not.
  static constexpr int KC = 64;
};

#ifdef KOKKOS_ENABLE_CUDA
template <class T>
struct StripTiles<T, Kokkos::Cuda> {
  static constexpr int MR = 4, NR = 4, KC = 1 << 30;
};
#endif

// Where product (n, g) of a batch lies: W[g] at w + g * w_g, X[n][g] at
// x + n * x_n + g * x_g, Y[n][g] at y + n * y_n + g * y_g, b[g] at b + g * M.
struct StripGemm {
  int M = 0, K = 0, P = 0, G = 1;
  int64_t w_g = 0, x_n = 0, x_g = 0, y_n = 0, y_g = 0;
};

namespace detail {

// acc[r][c] = sum over k < K of w[r * ws + k] * x[k * xs + c]; Full: all NR columns
// exist, else only c < nc (masked loads). Rows r >= mr repeat row mr - 1.
template <class T, int MR, int NR, bool Full>
KOKKOS_INLINE_FUNCTION SP_MICROKERNEL_ATTR void strip_micro(int K, const T* __restrict w, int ws, int mr,
                                                            const T* __restrict x, int64_t xs, int nc,
                                                            T (&acc)[MR][NR]) {
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

#if defined(SP_HOST_AVX512)
template <class T>
using StripVec = Avx512<T>;
#elif defined(SP_HOST_AVX2)
template <class T>
using StripVec = Avx2<T>;
#endif

#if defined(SP_HOST_AVX2) || defined(SP_HOST_AVX512)
// The same sums as strip_micro<T, MR, NV * L, true> (fused multiply-adds in the same order), with
// each weight broadcast right before its NV FMAs so that the NV MR accumulators stay in registers:
// c[r][v] = vector v of row r's strip. Inlined into both callers below.
template <class T, int MR, int NV>
__attribute__((always_inline)) inline void strip_accumulate_simd(int K, const T* __restrict w, int ws, int mr,
                                                                 const T* __restrict x, int64_t xs,
                                                                 typename StripVec<T>::V (&c)[MR][NV]) {
  using A = StripVec<T>;
  using V = typename A::V;
  const T* wr[MR];
  for (int r = 0; r < MR; ++r) wr[r] = w + (r < mr ? r : mr - 1) * ws;
  SP_UNROLL for (int r = 0; r < MR; ++r) SP_UNROLL for (int v = 0; v < NV; ++v) c[r][v] = A::zero();
  for (int k = 0; k < K; ++k) {
    const T* xk = x + k * xs;
    V b[NV];
    SP_UNROLL for (int v = 0; v < NV; ++v) b[v] = A::load(xk + v * A::L);
    SP_UNROLL for (int r = 0; r < MR; ++r) {
      const V a = A::bcast(wr[r] + k);
      SP_UNROLL for (int v = 0; v < NV; ++v) c[r][v] = A::fma(a, b[v], c[r][v]);
    }
  }
}

// The accumulators stored to acc, for strip_block's loops to finish.
template <class T, int MR, int NV>
__attribute__((noinline)) void strip_micro_simd(int K, const T* __restrict w, int ws, int mr, const T* __restrict x,
                                                int64_t xs, T (&acc)[MR][NV * StripVec<T>::L]) {
  using A = StripVec<T>;
  typename A::V c[MR][NV];
  strip_accumulate_simd<T, MR, NV>(K, w, ws, mr, x, xs, c);
  SP_UNROLL for (int r = 0; r < MR; ++r) SP_UNROLL for (int v = 0; v < NV; ++v) A::store(acc[r] + v * A::L, c[r][v]);
}

// strip_micro_simd with strip_block's store done from the registers, for a whole strip (c_lo = 0) and
// no activation or relu: rows r < mr of y (row stride ys) get (acc + y) when !first, then + b[r] when
// last and b, then relu when last and relu: the operations and their order of strip_block's loops.
template <class T, int MR, int NV>
__attribute__((noinline)) void strip_micro_simd_store(int K, const T* __restrict w, int ws, int mr,
                                                      const T* __restrict x, int64_t xs, bool first, bool last,
                                                      const T* b, bool relu, T* __restrict y, int64_t ys) {
  using A = StripVec<T>;
  using V = typename A::V;
  V c[MR][NV];
  strip_accumulate_simd<T, MR, NV>(K, w, ws, mr, x, xs, c);
  SP_UNROLL for (int r = 0; r < MR; ++r) {
    if (r >= mr) break;
    T* d = y + r * ys;
    const V bo = A::set1(b && last ? b[r] : T(0));
    SP_UNROLL for (int v = 0; v < NV; ++v) {
      V u = c[r][v];
      if (!first) u = A::add(u, A::load(d + v * A::L));
      u = A::add(u, bo);
      if (last && relu) u = A::relu(u);
      A::store(d + v * A::L, u);
    }
  }
}
#endif

// Rows [0, mr) of one MR-row block, columns [c_lo, nc) of one strip, over one K slice of kc terms
// (weights w, row stride ws; the slice of X at x, row stride xs): y[r * P + c] = acc, or y + acc after the first slice
// (first = false); after the last slice (last = true) act(... + b[r]).
template <class T, int MR, int NR, bool Full>
KOKKOS_INLINE_FUNCTION void strip_block(int kc, const T* w, int ws, bool first, bool last, const T* b, Act act, int mr,
                                        const T* x, int64_t xs, int P, int nc, int c_lo, T* y) {
  T acc[MR][NR];
#if defined(SP_HOST_AVX2) || defined(SP_HOST_AVX512)
  if constexpr (Full && (std::is_same<T, float>::value || std::is_same<T, double>::value) && NR % StripVec<T>::L == 0) {
    constexpr int NV = NR / StripVec<T>::L;
    if (c_lo == 0 && act != Act::sigmoid)
      return strip_micro_simd_store<T, MR, NV>(kc, w, ws, mr, x, xs, first, last, b, act == Act::relu, y, P);
    strip_micro_simd<T, MR, NV>(kc, w, ws, mr, x, xs, acc);
  } else
#endif
    strip_micro<T, MR, NR, Full>(kc, w, ws, mr, x, xs, nc, acc);
  for (int r = 0; r < mr; ++r) {
    const T bo = b && last ? b[r] : T(0);
    T* d = y + int64_t(r) * P;
    if (!first)
      for (int c = c_lo; c < nc; ++c) acc[r][c] += d[c];
    if (!last || act == Act::none)
      for (int c = c_lo; c < nc; ++c) d[c] = acc[r][c] + bo;
    else
      for (int c = c_lo; c < nc; ++c) d[c] = activate(acc[r][c] + bo, act);
  }
}

}  // namespace detail

// For n < batch and g < d.G: Y[n][g] = act(W[g] X[n][g] + b[g]) (layouts in StripGemm); b may be null.
template <class T, class Space = Kokkos::DefaultExecutionSpace>
SP_UNIT_LOCAL void strip_gemm(const char* label, int batch, const StripGemm d, const T* w, const T* x, const T* b, T* y,
                              Act act) {
  constexpr int MR = StripTiles<T, Space>::MR, NR = StripTiles<T, Space>::NR, KC = StripTiles<T, Space>::KC;
  const int P = d.P, M = d.M, K = d.K, G = d.G;
  const int nstrips = (P + NR - 1) / NR;
  if (batch <= 0 || M <= 0 || P <= 0) return;
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<Space>(0, int64_t(batch) * G * nstrips), KOKKOS_LAMBDA(const int64_t item) {
        const int strip = static_cast<int>(item % nstrips);
        const int64_t ng = item / nstrips;
        const int g = static_cast<int>(ng % G);
        const int64_t n = ng / G;
        const T* xp = x + n * d.x_n + g * d.x_g;
        T* yp = y + n * d.y_n + g * d.y_g;
        const T* wp = w + g * d.w_g;
        const T* bp = b ? b + int64_t(g) * M : nullptr;
        int j0 = strip * NR, c_lo = 0;
        if (P < NR) {  // one narrow strip: masked loads
          for (int k0 = 0; k0 < K || k0 == 0; k0 += KC) {
            const int kc = K - k0 < KC ? K - k0 : KC;
            for (int o0 = 0; o0 < M; o0 += MR)
              detail::strip_block<T, MR, NR, false>(kc, wp + int64_t(o0) * K + k0, K, k0 == 0, k0 + kc >= K,
                                                    bp ? bp + o0 : bp, act, M - o0 < MR ? M - o0 : MR,
                                                    xp + int64_t(k0) * P, P, P, P, 0, yp + int64_t(o0) * P);
          }
          return;
        }
        if (j0 + NR > P) c_lo = j0 - (P - NR), j0 = P - NR;  // last strip slides left; stores its new columns only
        // Ask for the strip of X four ahead while this one computes (K rows, P apart: more streams than
        // the hardware prefetcher follows), a share of the slice's rows before each row block. Into L2:
        // the first row block's loads of a slice find it there in a few cycles, and four strips held
        // in L1 would crowd out what the row blocks read there (the slice, W's rows) and the lines of Y
        // they store to.
        const bool pf = j0 + 5 * NR <= P;
        const int nob = (M + MR - 1) / MR;
        for (int k0 = 0; k0 < K || k0 == 0; k0 += KC) {
          const int kc = K - k0 < KC ? K - k0 : KC, kper = (kc + nob - 1) / nob;
          const T* xs = xp + int64_t(k0) * P + j0;
          for (int o0 = 0, ob = 0; o0 < M; o0 += MR, ++ob) {
            if (pf)
              for (int k = k0 + ob * kper; k < k0 + kc && k < k0 + (ob + 1) * kper; ++k)
                for (int c = 0; c < NR; c += 64 / static_cast<int>(sizeof(T)))
                  SP_PREFETCH_L2(xp + int64_t(k) * P + j0 + 4 * NR + c);
            const int mr = M - o0 < MR ? M - o0 : MR;
            // A last block of at most MR - 2 rows takes the (MR - 2)-row tile (M = 64 with MR = 6: 64
            // rows computed, not 66).
            if (MR > 4 && mr <= MR - 2)
              detail::strip_block<T, (MR > 4 ? MR - 2 : MR), NR, true>(kc, wp + int64_t(o0) * K + k0, K, k0 == 0,
                                                                       k0 + kc >= K, bp ? bp + o0 : bp, act, mr, xs, P,
                                                                       P, NR, c_lo, yp + int64_t(o0) * P + j0);
            else
              detail::strip_block<T, MR, NR, true>(kc, wp + int64_t(o0) * K + k0, K, k0 == 0, k0 + kc >= K,
                                                   bp ? bp + o0 : bp, act, mr, xs, P, P, NR, c_lo,
                                                   yp + int64_t(o0) * P + j0);
          }
        }
      });
}

}  // namespace sp::conv
