#pragma once
// The direct convolution's host vector path, AVX2 (host_avx2.hpp) or AVX-512
// (host_avx512.hpp), where either applies: stride 1, fp32 and fp64, any kernel
// size, padding and groups, bias and activation fused. conv_direct.hpp calls
// it; the portable kernel there serves every other case and every other back
// end.
//
// Work item = a block of R output rows (n, group, rows), as in the portable
// kernel: its input rows for all C_in/g channels of the group are copied
// into scratch, zero-padded, each row exactly W + 2 pad_w wide (wp). With
// stride 1, output (oh, ow) of the block reads scratch positions
// q + r wp + c of every channel, q = (oh - oh0) wp + ow: consecutive outputs
// are consecutive positions across row ends too. So the outputs are tiled
// along q, not along a row: a tile is WB consecutive positions, of which
// only the kw - 1 positions at each row end (ow >= OW) are not outputs
// (computed from in-bounds scratch, never stored). A 28-wide output row
// wastes 2 of 30 positions this way, against 4 of 32 with row-aligned tiles.
//
// Register tile: OCB output channels x NV = 3 vectors of positions. AVX2
// (16 registers): OCB = 4, 12 accumulators; 3 input vectors and one
// broadcast weight make 16 (GCC 12 still moves two accumulators through the
// stack once per input channel of the 3 x 3 tile, against 108 FMAs).
// AVX-512 (32 registers): OCB = 8, 24 accumulators, 28 registers in all. Per
// (ic, r, c) tap: 3 loads of input, OCB weight broadcasts, 3 OCB FMAs; the
// output channel is the broadcast operand, the position the vector lane,
// because NCHW keeps positions contiguous.
// The weights are read in place (OIHW): one pointer per output channel of
// the tile, advanced together, so no packing is needed.
// While an item's tiles compute, the next item's input rows are prefetched
// into L2, so that its copy into scratch does not wait on memory.
// Loop order in an item: channel tiles outer, position tiles inner: the
// tile's weights (OCB C_in/g kh kw values) stay in L1 while the input streams
// from the L2-resident scratch, each input line reused by the kh row taps
// of nearby tiles.
//
// Tails: a last position tile that would run past the block's last output
// slides back to end there and stores only positions the previous tile did
// not; a channel tile narrower than OCB repeats its last channel in the
// spare rows and stores the valid ones. A block with fewer than WB
// positions reads up to WB positions past its last row: the scratch has WB
// zeroed elements at its end.
//
// Each output is the sum over (ic, r, c) in that order, by FMAs, then
// + bias: one of the orders the reference's bound covers (any order).
#include "kernels/conv/host_avx2.hpp"
#include "kernels/conv/host_avx512.hpp"

#if defined(SP_HOST_AVX2) || defined(SP_HOST_AVX512)
#include <Kokkos_Core.hpp>

#include "kernels/conv/conv_views.hpp"
#include "kernels/gemm/gemm_tiled.hpp"  // SP_UNROLL
#include "scaleproof/kokkos_compat.hpp"

namespace sp::conv {

namespace detail {
#ifdef SP_HOST_AVX512
template <class T>
using DirectVec = Avx512<T>;
#else
template <class T>
using DirectVec = Avx2<T>;
#endif
}  // namespace detail

template <class T>
struct DirectSimdTiles {
  static constexpr int OCB = sizeof(typename detail::DirectVec<T>::V) == 64 ? 8 : 4;  // output channels
  static constexpr int NV = 3;                             // vectors of consecutive positions
  static constexpr int WB = NV * detail::DirectVec<T>::L;  // positions per tile: 24 or 48 fp32
  static constexpr int scratch_bytes = 192 * 1024;         // input rows per item, well inside a 1 MiB L2
};

namespace detail {

// acc[o][j] = sum over (ic, r, c) of w[o][ic][r][c] * x[ic * ics + r * wp + c + j], j < WB, with
// w[o] = wr[min(o, mr - 1)] (OIHW rows of kh * kw taps per input channel). KH, KW > 0: the kernel
// size fixed at compile time (the tap loops unrolled); 0: kh, kw at run time.
template <class T, int KH, int KW>
__attribute__((noinline)) void direct_simd_tile(const T* __restrict x, int ics, int wp, int cin, int kh_rt, int kw_rt,
                                                const T* __restrict w, int wos, int mr,
                                                T (&acc)[DirectSimdTiles<T>::OCB][DirectSimdTiles<T>::WB]) {
  using A = DirectVec<T>;
  using V = typename A::V;
  constexpr int OCB = DirectSimdTiles<T>::OCB, NV = DirectSimdTiles<T>::NV, L = A::L;
  const int kh = KH > 0 ? KH : kh_rt, kw = KW > 0 ? KW : kw_rt, taps = kh * kw;
  const T* wr[OCB];
  SP_UNROLL for (int o = 0; o < OCB; ++o) wr[o] = w + (o < mr ? o : mr - 1) * wos;
  V c[OCB][NV];
  SP_UNROLL for (int o = 0; o < OCB; ++o) SP_UNROLL for (int v = 0; v < NV; ++v) c[o][v] = A::zero();
  for (int ic = 0; ic < cin; ++ic) {
    const T* xi = x + ic * ics;
    const int wi = ic * taps;
    SP_UNROLL for (int r = 0; r < kh; ++r) SP_UNROLL for (int cc = 0; cc < kw; ++cc) {
      const T* xp = xi + r * wp + cc;
      const int t = wi + r * kw + cc;
      V in[NV];
      SP_UNROLL for (int v = 0; v < NV; ++v) {
        in[v] = A::load(xp + v * L);
        // Keeps the vector in a register: without it GCC folds the load into each of its OCB FMAs
        // (OCB loads instead of one, often split across two cache lines).
        __asm__("" : "+v"(in[v]));
      }
      SP_UNROLL for (int o = 0; o < OCB; ++o) {
        V a = A::bcast(wr[o] + t);
        __asm__("" : "+v"(a));  // the same for the weight: fewer accumulators moved to the stack
        SP_UNROLL for (int v = 0; v < NV; ++v) c[o][v] = A::fma(a, in[v], c[o][v]);
      }
    }
  }
  SP_UNROLL for (int o = 0; o < OCB; ++o) SP_UNROLL for (int v = 0; v < NV; ++v) A::store(acc[o] + v * L, c[o][v]);
}

template <class T>
inline void direct_simd_tile_any(const T* x, int ics, int wp, int cin, int kh, int kw, const T* w, int wos, int mr,
                                 T (&acc)[DirectSimdTiles<T>::OCB][DirectSimdTiles<T>::WB]) {
  if (kh == 3 && kw == 3)
    direct_simd_tile<T, 3, 3>(x, ics, wp, cin, kh, kw, w, wos, mr, acc);
  else
    direct_simd_tile<T, 0, 0>(x, ics, wp, cin, kh, kw, w, wos, mr, acc);
}

}  // namespace detail

// Positions one image's output computes when its OH rows go in blocks of r: a block of nr rows
// computes (nr - 1) wp + OW positions, rounded up to whole tiles of WB.
template <class T>
inline int64_t direct_simd_positions(const ConvSpec& s, int h, int w, int r) {
  constexpr int WB = DirectSimdTiles<T>::WB;
  const int oh = s.out_h(h), ow = s.out_w(w), wp = w + 2 * s.pad_w;
  const auto block = [&](int nr) { return int64_t((nr - 1) * wp + ow + WB - 1) / WB * WB; };
  return int64_t(oh / r) * block(r) + (oh % r ? block(oh % r) : 0);
}

// Output rows per work item of the vector path: of the row counts whose R + kh - 1 padded input rows of
// all C_in/g channels fit the scratch budget (at least one row), the one that computes the fewest
// positions (direct_simd_positions; the largest such count on a tie). The tile rounding at a block's
// end and a short last block are the work this saves: a 56-row 3x3 "same" image in blocks of 11 rows
// (the most that fit at 64 channels) computes 3456 positions for 3136 outputs, in blocks of 5
// rows 3264 (a 5-row block is 288 positions, exactly 6 tiles of 48).
template <class T>
inline int direct_simd_rows_per_item(const ConvSpec& s, int h, int w) {
  const int per_row = s.cin_g() * (w + 2 * s.pad_w) * static_cast<int>(sizeof(T));
  const int in_rows = DirectSimdTiles<T>::scratch_bytes / per_row;
  int rmax = in_rows >= s.kh ? in_rows - s.kh + 1 : 1;
  if (rmax > s.out_h(h)) rmax = s.out_h(h);
  int best = rmax;
  for (int r = rmax - 1; r >= 1; --r)
    if (direct_simd_positions<T>(s, h, w, r) < direct_simd_positions<T>(s, h, w, best)) best = r;
  return best;
}

// out = act(conv(in, w) + b) for s.stride == 1; same contract as conv2d_direct.
template <class T, class Space>
SP_UNIT_LOCAL void conv2d_direct_simd(const ConvSpec& s, CTensor<T> in, CTensor<T> w, CVec<T> b, Tensor<T> out) {
  constexpr int OCB = DirectSimdTiles<T>::OCB, WB = DirectSimdTiles<T>::WB;
  // Items are handed out dynamically: a thread slowed by anything outside the kernel (another
  // process, a host's other guests) leaves its share to the others instead of holding the launch
  // open. On the host back ends a thread still takes consecutive items, from its own range first.
  using Policy = Kokkos::TeamPolicy<Space, Kokkos::Schedule<Kokkos::Dynamic>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<T*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int N = static_cast<int>(in.extent(0)), H = static_cast<int>(in.extent(2)), W = static_cast<int>(in.extent(3));
  const int OH = s.out_h(H), OW = s.out_w(W), G = s.groups;
  const int cin_g = s.cin_g(), cout_g = s.cout_g();
  const int wp = W + 2 * s.pad_w;  // = OW + kw - 1 at stride 1
  const int R = direct_simd_rows_per_item<T>(s, H, W);
  const int nrb = (OH + R - 1) / R;
  const int in_rows = R + s.kh - 1;
  const int ics = in_rows * wp;
  const int rows_len = cin_g * ics;
  const int ntc = (cout_g + OCB - 1) / OCB;
  const int wos = cin_g * s.kh * s.kw;
  Policy policy(N * G * nrb, 1);
  Kokkos::parallel_for(
      "conv2d_direct", policy.set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(rows_len + WB))),
      KOKKOS_LAMBDA(const Member& m) {
        const int item = m.league_rank();
        const int rb = item % nrb, g = (item / nrb) % G, n = item / (nrb * G);
        const int oh0 = rb * R, ih0 = oh0 - s.pad_h;
        const int nr = OH - oh0 < R ? OH - oh0 : R;
        Scratch rows(m.team_scratch(0), rows_len + WB);
        // Zero-padded copy of the item's input rows, one (channel, row) per thread; then the zeroed tail.
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, cin_g * in_rows), [&](const int cr) {
          const int ic = cr / in_rows, ih = ih0 + cr % in_rows;
          T* dst = &rows(cr * wp);
          const bool inside = ih >= 0 && ih < H;
          const int lo = inside ? s.pad_w : wp, hi = inside ? s.pad_w + W : wp;
          for (int x = 0; x < lo; ++x) dst[x] = T(0);
          if (lo < hi) {
            const T* src = &in(n, g * cin_g + ic, ih, 0) - s.pad_w;
            for (int x = lo; x < hi; ++x) dst[x] = src[x];
          }
          for (int x = hi; x < wp; ++x) dst[x] = T(0);
        });
        Kokkos::single(Kokkos::PerTeam(m), [&]() {
          for (int x = 0; x < WB; ++x) rows(rows_len + x) = T(0);
        });
        m.team_barrier();
        const T* rp = &rows(0);
        const int qend = (nr - 1) * wp + OW;  // one past the block's last output position
        const int ntq = (qend + WB - 1) / WB;
        // The next item's input rows, a share before each tile, asked for into L2: on the host back
        // ends a thread mostly runs consecutive items, so the next item's copy above then reads
        // L2 instead of waiting on memory with no arithmetic to overlap.
        const int next = item + 1, n_next = next / (nrb * G), g_next = (next / nrb) % G;
        const int ih_next = (next % nrb) * R - s.pad_h, pairs = cin_g * in_rows;
        const int per_tile = (pairs + ntc * ntq - 1) / (ntc * ntq);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, ntc * ntq), [&](const int t) {
          if (n_next < N)
            for (int cr = t * per_tile; cr < pairs && cr < (t + 1) * per_tile; ++cr) {
              const int ih = ih_next + cr % in_rows;
              if (ih < 0 || ih >= H) continue;
              const char* row = reinterpret_cast<const char*>(&in(n_next, g_next * cin_g + cr / in_rows, ih, 0));
              for (int x = 0; x < W * static_cast<int>(sizeof(T)); x += 64) __builtin_prefetch(row + x, 0, 2);
            }
          const int tc = t / ntq;
          int q0 = (t % ntq) * WB, jlo = 0;
          if (q0 + WB > qend && qend >= WB) jlo = q0 - (qend - WB), q0 = qend - WB;  // slide back
          const int oc0 = g * cout_g + tc * OCB;
          const int mr = cout_g - tc * OCB < OCB ? cout_g - tc * OCB : OCB;
          T acc[OCB][WB];
          detail::direct_simd_tile_any<T>(rp + q0, ics, wp, cin_g, s.kh, s.kw, w.data() + int64_t(oc0) * wos, wos, mr,
                                          acc);
          const int jend = qend - q0 < WB ? qend - q0 : WB;
          for (int j = jlo; j < jend;) {
            const int lo = (q0 + j) / wp, ow = q0 + j - lo * wp;
            if (ow >= OW) {  // a row end's non-output positions
              j += wp - ow;
              continue;
            }
            const int len = OW - ow < jend - j ? OW - ow : jend - j;
            for (int o = 0; o < mr; ++o) {
              const T bo = s.bias ? b(oc0 + o) : T(0);
              T* dst = &out(n, oc0 + o, oh0 + lo, ow);
              const T* src = acc[o] + j;
              if (s.act == Act::none)
                for (int k = 0; k < len; ++k) dst[k] = src[k] + bo;
              else
                for (int k = 0; k < len; ++k) dst[k] = activate(src[k] + bo, s.act);
            }
            j += len;
          }
        });
      });
}

}  // namespace sp::conv
#endif
