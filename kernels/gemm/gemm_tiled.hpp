#pragma once
// C = A * B (row-major, any M, N, K), tiled for the memory hierarchy as
// the GotoBLAS scheme (Goto and van de Geijn 2008): a team owns a block of
// C's columns (NC wide) and rows; for every KC-long slice of K it packs that
// slice of B (KC x NC) once into team scratch and then, for each MC-row block
// of its rows, packs the A block (MC x KC) and accumulates MR x NR register
// tiles from the two packed blocks. On a CPU a team is one thread with a
// slab of rows, so a packed B slice is reused over the slab while the A
// block sits in the core's L2 and no thread waits for another; on a GPU a
// team owns one MC x NC block and its scratch is shared memory. The same
// source serves every back end; only the tile sizes and the packing order
// differ (docs/roofline.md, "GEMM").
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include "scaleproof/kokkos_compat.hpp"

namespace sp::kernels {

// Fully unrolled fixed-size loops keep the accumulator tile in registers.
#if defined(__CUDA_ARCH__) || defined(__NVCC__)
#define SP_UNROLL _Pragma("unroll")
#elif defined(__clang__)
#define SP_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define SP_UNROLL _Pragma("GCC unroll 32")
#else
#define SP_UNROLL
#endif

// GCC's loop vectorizer would vectorize the micro-kernel across k (with
// shuffles); with it off for this function, the straight-line SLP vectorizer
// maps each accumulator row onto vector registers, which is what a BLAS
// micro-kernel does. Host GCC only; other compilers ignore it.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDA_ARCH__) && !defined(__NVCC__)
#define SP_MICROKERNEL_ATTR __attribute__((optimize("no-tree-loop-vectorize"), noinline))
#else
#define SP_MICROKERNEL_ATTR
#endif

// Host-only builds (no device back end) with GCC or Clang write the
// micro-kernel in the compilers' generic vector types: one accumulator row
// of NR elements is NR / lanes vector registers, each k step loads NR
// packed B elements as whole vectors and broadcasts one packed A element per
// row. A build with a device back end uses the plain loops below everywhere.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP) && \
    !defined(KOKKOS_ENABLE_SYCL) && !defined(KOKKOS_ENABLE_OPENMPTARGET)
#define SP_GEMM_HOST_VECTORS 1
#endif

// acc[MR][NR] = sum over k < kc of a[k][r] * b[k][c] (packed micro-panels).
template <class T, int MR, int NR>
KOKKOS_INLINE_FUNCTION SP_MICROKERNEL_ATTR void gemm_micro(int kc, const T* __restrict a, const T* __restrict b,
                                                           T (&acc)[MR][NR]) {
  SP_UNROLL for (int r = 0; r < MR; ++r) SP_UNROLL for (int c = 0; c < NR; ++c) acc[r][c] = 0;
  for (int k = 0; k < kc; ++k) {
    SP_UNROLL for (int r = 0; r < MR; ++r) {
      const T ar = a[k * MR + r];
      SP_UNROLL for (int c = 0; c < NR; ++c) acc[r][c] += ar * b[k * NR + c];
    }
  }
}

// The C update of one register tile: C[r][c] = (fresh ? 0 : C[r][c]) + acc[r][c]
// for r < rmax, c < cmax (the tile's part inside C).
template <class T, int MR, int NR>
KOKKOS_INLINE_FUNCTION void gemm_tile_store(const T (&acc)[MR][NR], T* c, int64_t crs, int64_t ccs, int rmax, int cmax,
                                            bool fresh) {
  for (int r = 0; r < rmax; ++r)
    for (int j = 0; j < cmax; ++j) {
      T& out = c[r * crs + j * ccs];
      out = (fresh ? T(0) : out) + acc[r][j];
    }
}

#ifdef SP_GEMM_HOST_VECTORS
// The register tile with VB-byte vectors: the same sums in the same order as
// gemm_micro (each element sum_k a[k][r] * b[k][c] from 0, k ascending, one
// multiply-add per k), then the same C update, a full tile of a C with unit
// column stride as whole vectors.
template <class T, int MR, int NR, int VB>
__attribute__((noinline)) void gemm_tile_vec(int kc, const T* __restrict a, const T* __restrict b, T* c, int64_t crs,
                                             int64_t ccs, int rmax, int cmax, bool fresh) {
  constexpr int W = VB / static_cast<int>(sizeof(T)), NV = NR / W;
  static_assert(NR % W == 0, "a tile row is whole vectors");
  typedef T V __attribute__((vector_size(VB)));
  V acc[MR][NV];
  SP_UNROLL for (int r = 0; r < MR; ++r) SP_UNROLL for (int v = 0; v < NV; ++v) acc[r][v] = V{};
  // The C tile's cache lines are requested now and arrive while the k loop
  // runs (a row of a full tile spans at most two lines past its first).
  if (rmax == MR && cmax == NR && ccs == 1) SP_UNROLL for (int r = 0; r < MR; ++r) {
      __builtin_prefetch(c + r * crs, 1);
      __builtin_prefetch(c + r * crs + NR - 1, 1);
    }
  for (int k = 0; k < kc; ++k) {
    V bv[NV];
    SP_UNROLL for (int v = 0; v < NV; ++v) std::memcpy(&bv[v], b + k * NR + v * W, sizeof(V));
    SP_UNROLL for (int r = 0; r < MR; ++r) {
      // A broadcast: x - 0 is x for every x (-0 included), so it folds away.
      const V av = a[k * MR + r] - V{};
      SP_UNROLL for (int v = 0; v < NV; ++v) acc[r][v] += av * bv[v];
    }
  }
  if (rmax == MR && cmax == NR && ccs == 1) {
    SP_UNROLL for (int r = 0; r < MR; ++r) SP_UNROLL for (int v = 0; v < NV; ++v) {
      T* p = c + r * crs + v * W;
      V out = V{};
      if (!fresh) std::memcpy(&out, p, sizeof(V));
      out += acc[r][v];
      std::memcpy(p, &out, sizeof(V));
    }
  } else {
    T t[MR][NR];
    std::memcpy(t, acc, sizeof(t));
    gemm_tile_store<T, MR, NR>(t, c, crs, ccs, rmax, cmax, fresh);
  }
}
#endif

template <class T, class Space>
struct GemmTiles {
  // CPU (BLIS-style): the MR x NR accumulator tile takes 2 x MR vector
  // registers (16 of AVX-512's 32, 12 of AVX2's 16), enough independent FMAs
  // to hide their latency, leaving registers for the two B vectors and an A
  // broadcast. KC x NR of packed B (16 KiB) stays in L1 while a tile row
  // sweeps the A block; the MC x KC A block (about 288 KiB, of a 512 KiB or
  // larger L2) stays in the core's L2 while the B slice (KC x NC, at most 4
  // or 8 MiB) streams from L3.
#if defined(__AVX512F__)
  static constexpr int VEC = 64;  // bytes per vector register
  static constexpr int MR = 8;
#else
  static constexpr int VEC = 32;
  static constexpr int MR = 6;
#endif
  static constexpr int NR = 2 * VEC / static_cast<int>(sizeof(T));
  static constexpr int KC = 256;
  static constexpr int MC = MR * (288 * 1024 / (MR * KC * static_cast<int>(sizeof(T))));
  static constexpr int NC = 4096;
  // A team is one thread that owns a slab of C's rows (all of them when
  // there are enough column blocks or matrices to occupy every thread): it
  // packs its own B slices and A blocks, one micro-panel at a time
  // (contiguous writes), and never waits for another thread.
  static constexpr bool row_slabs = true;
};

#ifdef KOKKOS_ENABLE_CUDA
template <class T>
struct GemmTiles<T, Kokkos::Cuda> {
  // GPU: a 64 x 64 block per team of 256 threads, 4 x 4 outputs per thread,
  // 16-deep K slices in shared memory.
  static constexpr int NR = 4, MR = 4, MC = 64, NC = 64, KC = 16;
  // A team owns one MC x NC block and packs one element row per thread
  // (coalesced reads).
  static constexpr bool row_slabs = false;
};
#endif

// One operand of a (batched) product: element (i, k) of matrix b of the batch
// is p[(b / nh) * bs + (b % nh) * bh + i * rs + k * cs]. A row-major matrix
// with leading dimension ld is {p, ld, 1}; its transpose {p, 1, ld}; the
// two batch strides let a batch run over (sample, head) pairs whose matrices
// are column blocks of one activation (attention).
template <class S>
struct GemmOperand {
  S* p;
  int64_t rs, cs;
  int64_t bs = 0, bh = 0;
  int nh = 1;
  KOKKOS_INLINE_FUNCTION S* base(int b) const { return p + (b / nh) * bs + (b % nh) * bh; }
};

// Widening of a stored element into the accumulation type: a storage type
// with its own decoder (to_float(), the 16-bit types) goes through it,
// anything else through a conversion.
template <class Acc, class S>
KOKKOS_INLINE_FUNCTION auto gemm_widen(const S& x, int) -> decltype(static_cast<Acc>(x.to_float())) {
  return static_cast<Acc>(x.to_float());
}
template <class Acc, class S>
KOKKOS_INLINE_FUNCTION Acc gemm_widen(const S& x, long) {
  return static_cast<Acc>(x);
}

// For each b < batch: C_b (M x N) = A_b (M x K) B_b (K x N), or C_b += A_b B_b
// when accumulating. A and B may be stored in any type that widens to Acc;
// packing converts, so the micro-kernel runs in Acc. C holds Acc: every
// K slice is added to it, so a narrower C would be rounded once per slice.
// Each element is sum_k in order within a KC slice, the slices added to C
// in order: for K <= KC, a sequential dot product started from 0 (or C).
template <class Acc, class SA, class SB, class Space = Kokkos::DefaultExecutionSpace>
SP_UNIT_LOCAL void gemm_tiled_batched(int batch, int M, int N, int K, GemmOperand<const SA> A, GemmOperand<const SB> B,
                                      GemmOperand<Acc> C, bool accumulate = false) {
  using T = Acc;
  using Tiles = GemmTiles<T, Space>;
  constexpr int MR = Tiles::MR, NR = Tiles::NR, MC = Tiles::MC, NC = Tiles::NC, KC = Tiles::KC;
  constexpr bool slabs = Tiles::row_slabs;
  static_assert(MC % MR == 0 && NC % NR == 0, "blocks must hold whole register tiles");
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<T*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  if (batch <= 0 || M <= 0 || N <= 0) return;

  // Block sizes: row slabs size their blocks to the problem (no scratch for
  // rows or columns that do not exist); a GPU team's are fixed. A slab is
  // rows_per rows (whole register tiles), enough slabs that every thread
  // has one when there are fewer column blocks and matrices than threads.
  auto round_up = [](int x, int r) { return (x + r - 1) / r * r; };
  const int nc = slabs ? (N < NC ? round_up(N, NR) : NC) : NC;
  const int nblocks = (N + nc - 1) / nc;
  const int threads = Space().concurrency(), cols = batch * nblocks;
  const int want = slabs && cols < threads ? (threads + cols - 1) / cols : 1;
  const int rows_per = slabs ? round_up((M + want - 1) / want, MR) : MC;
  const int rgroups = (M + rows_per - 1) / rows_per;
  // A slab's rows in equal blocks of at most MC (whole register tiles).
  const int mc = slabs ? round_up((rows_per + (rows_per + MC - 1) / MC - 1) / ((rows_per + MC - 1) / MC), MR) : MC;
  const int kcap = slabs ? (K < KC ? (K > 0 ? K : 1) : KC) : KC;
  const int blocks = rgroups * nblocks, league = batch * blocks;
  // Packed blocks start on a 64-byte boundary on a CPU (whole cache lines per
  // vector load): pad elements in front of each.
  constexpr int pad = slabs ? 64 / static_cast<int>(sizeof(T)) : 0;
  const size_t scratch = Scratch::shmem_size(size_t(mc) * kcap + pad) + Scratch::shmem_size(size_t(kcap) * nc + pad);
  int team = 1;
#ifdef KOKKOS_ENABLE_CUDA
  if (std::is_same<Space, Kokkos::Cuda>::value) team = (MC / MR) * (NC / NR);
#endif
  Policy policy(league, team);

  Kokkos::parallel_for(
      "gemm_tiled", policy.set_scratch_size(0, Kokkos::PerTeam(scratch)), KOKKOS_LAMBDA(const Member& m) {
        const int bt = m.league_rank() / blocks, blk = m.league_rank() % blocks;
        const int r0 = (blk / nblocks) * rows_per;
        const int r1 = r0 + rows_per < M ? r0 + rows_per : M;
        const int j0 = (blk % nblocks) * nc;
        const int jpanels = ((N - j0 < nc ? N - j0 : nc) + NR - 1) / NR;
        const SA* a_ = A.base(bt);
        const SB* b_ = B.base(bt);
        T* c_ = C.base(bt);
        const int64_t ars = A.rs, acs = A.cs, brs = B.rs, bcs = B.cs, crs = C.rs, ccs = C.cs;
        // Packed layouts: Ap[ir][k][r] (MR-row micro-panels), Bp[jr][k][c] (NR-column micro-panels),
        // zero-padded past M and N so the register tiles never test bounds.
        Scratch As(m.team_scratch(0), size_t(mc) * kcap + pad);
        Scratch Bs(m.team_scratch(0), size_t(kcap) * nc + pad);
        T* ap = As.data();
        T* bp = Bs.data();
        if (slabs) {
          ap += (64 - reinterpret_cast<uintptr_t>(ap) % 64) % 64 / sizeof(T);
          bp += (64 - reinterpret_cast<uintptr_t>(bp) % 64) % 64 / sizeof(T);
        }
        if (K <= 0) {  // empty sum: C = 0, or C unchanged when accumulating
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, r0, r1), [&](const int i) {
            if (accumulate) return;
            for (int j = j0; j < N && j < j0 + nc; ++j) c_[i * crs + j * ccs] = T(0);
          });
          return;
        }
        for (int k0 = 0; k0 < K; k0 += KC) {
          const int kc = K - k0 < KC ? K - k0 : KC;
          m.team_barrier();
          // B slice k0..k0+kc of columns j0..: element (k, j) is b_[k * brs + j * bcs].
          if (slabs) {
            // One NR-column micro-panel per thread: for a row-major B, NR
            // contiguous elements per k, copied and written contiguously.
            Kokkos::parallel_for(Kokkos::TeamThreadRange(m, jpanels), [&](const int jr) {
              T* dst = bp + jr * (NR * kc);
              const int gj = j0 + jr * NR;
              const int cols = N - gj < NR ? N - gj : NR;
              if (cols == NR && bcs == 1) {
                for (int k = 0; k < kc; ++k) {
                  const SB* src = b_ + (k0 + k) * brs + gj;
                  SP_UNROLL for (int c = 0; c < NR; ++c) dst[k * NR + c] = gemm_widen<T>(src[c], 0);
                }
              } else if (cols == NR && brs == 1) {
                SP_UNROLL for (int c = 0; c < NR; ++c) {
                  const SB* src = b_ + (gj + c) * bcs + k0;
                  for (int k = 0; k < kc; ++k) dst[k * NR + c] = gemm_widen<T>(src[k], 0);
                }
              } else {
                for (int k = 0; k < kc; ++k)
                  for (int c = 0; c < NR; ++c)
                    dst[k * NR + c] = c < cols ? gemm_widen<T>(b_[(k0 + k) * brs + (gj + c) * bcs], 0) : T(0);
              }
            });
          } else if (bcs == 1 || brs != 1) {
            // Packing reads along the operand's contiguous direction: a k of B
            // (or, for a transposed B, a column) per thread.
            Kokkos::parallel_for(Kokkos::TeamThreadRange(m, kc), [&](const int k) {
              const SB* src = b_ + (k0 + k) * brs;
              for (int jr = 0; jr < NC / NR; ++jr) {
                T* dst = bp + jr * (NR * kc) + k * NR;
                const int gj = j0 + jr * NR;
                if (gj + NR <= N && bcs == 1)
                  for (int c = 0; c < NR; ++c) dst[c] = gemm_widen<T>(src[gj + c], 0);
                else if (gj + NR <= N)
                  for (int c = 0; c < NR; ++c) dst[c] = gemm_widen<T>(src[(gj + c) * bcs], 0);
                else
                  for (int c = 0; c < NR; ++c) dst[c] = gj + c < N ? gemm_widen<T>(src[(gj + c) * bcs], 0) : T(0);
              }
            });
          } else {
            Kokkos::parallel_for(Kokkos::TeamThreadRange(m, NC), [&](const int j) {
              T* dst = bp + (j / NR) * (NR * kc) + j % NR;
              if (j0 + j < N) {
                const SB* src = b_ + (j0 + j) * bcs + k0;
                for (int k = 0; k < kc; ++k) dst[k * NR] = gemm_widen<T>(src[k], 0);
              } else {
                for (int k = 0; k < kc; ++k) dst[k * NR] = T(0);
              }
            });
          }
          const bool fresh = k0 == 0 && !accumulate;
          for (int i0 = r0; i0 < r1; i0 += mc) {
            const int ipanels = ((r1 - i0 < mc ? r1 - i0 : mc) + MR - 1) / MR;
            if (i0 != r0) m.team_barrier();  // the previous row block's tiles are done with Ap
            // A block rows i0.., slice k0..k0+kc: element (i, k) is a_[i * ars + k * acs].
            if (slabs) {
              // One MR-row micro-panel per thread, written contiguously.
              Kokkos::parallel_for(Kokkos::TeamThreadRange(m, ipanels), [&](const int ir) {
                T* dst = ap + ir * (MR * kc);
                const int gi = i0 + ir * MR;
                const int rows = M - gi < MR ? M - gi : MR;
                if (rows == MR && acs == 1) {
                  const SA* src[MR];
                  SP_UNROLL for (int r = 0; r < MR; ++r) src[r] = a_ + (gi + r) * ars + k0;
                  for (int k = 0; k < kc; ++k)
                    SP_UNROLL for (int r = 0; r < MR; ++r) dst[k * MR + r] = gemm_widen<T>(src[r][k], 0);
                } else if (rows == MR && ars == 1) {
                  for (int k = 0; k < kc; ++k) {
                    const SA* src = a_ + (k0 + k) * acs + gi;
                    SP_UNROLL for (int r = 0; r < MR; ++r) dst[k * MR + r] = gemm_widen<T>(src[r], 0);
                  }
                } else {
                  for (int k = 0; k < kc; ++k)
                    for (int r = 0; r < MR; ++r)
                      dst[k * MR + r] = r < rows ? gemm_widen<T>(a_[(gi + r) * ars + (k0 + k) * acs], 0) : T(0);
                }
              });
            } else if (acs == 1 || ars != 1) {
              // A row of A (or, for a transposed A, a k) per thread.
              Kokkos::parallel_for(Kokkos::TeamThreadRange(m, MC), [&](const int i) {
                const int gi = i0 + i;
                T* dst = ap + (i / MR) * (MR * kc) + i % MR;
                if (gi < M) {
                  const SA* src = a_ + gi * ars + k0 * acs;
                  if (acs == 1)
                    for (int k = 0; k < kc; ++k) dst[k * MR] = gemm_widen<T>(src[k], 0);
                  else
                    for (int k = 0; k < kc; ++k) dst[k * MR] = gemm_widen<T>(src[k * acs], 0);
                } else {
                  for (int k = 0; k < kc; ++k) dst[k * MR] = T(0);
                }
              });
            } else {
              Kokkos::parallel_for(Kokkos::TeamThreadRange(m, kc), [&](const int k) {
                const SA* src = a_ + (k0 + k) * acs;
                for (int i = 0; i < MC; ++i)
                  ap[(i / MR) * (MR * kc) + k * MR + i % MR] = i0 + i < M ? gemm_widen<T>(src[i0 + i], 0) : T(0);
              });
            }
            m.team_barrier();
            // jr outer, ir inner: a KC x NR panel of B is reused across all of
            // the block's rows; the team's threads take contiguous runs of jr.
            Kokkos::parallel_for(Kokkos::TeamThreadRange(m, jpanels * ipanels), [&](const int t) {
              const int jr = t / ipanels, ir = t % ipanels;
              const int gi = i0 + ir * MR, gj = j0 + jr * NR;
              if (gi >= M || gj >= N) return;
              const T* a = ap + ir * MR * kc;
              const T* b = bp + jr * NR * kc;
              const int rmax = M - gi < MR ? M - gi : MR, cmax = N - gj < NR ? N - gj : NR;
              T* c = c_ + gi * crs + gj * ccs;
#ifdef SP_GEMM_HOST_VECTORS
              gemm_tile_vec<T, MR, NR, Tiles::VEC>(kc, a, b, c, crs, ccs, rmax, cmax, fresh);
#else
              T acc[MR][NR];
              gemm_micro<T, MR, NR>(kc, a, b, acc);
              gemm_tile_store<T, MR, NR>(acc, c, crs, ccs, rmax, cmax, fresh);
#endif
            });
          }
        }
      });
}

// C = A * B for row-major Views (the gemm family's kernel).
template <class T, class Space = Kokkos::DefaultExecutionSpace>
void gemm_tiled(Kokkos::View<const T**, Kokkos::LayoutRight> A, Kokkos::View<const T**, Kokkos::LayoutRight> B,
                Kokkos::View<T**, Kokkos::LayoutRight> C) {
  const int M = static_cast<int>(C.extent(0)), N = static_cast<int>(C.extent(1)), K = static_cast<int>(A.extent(1));
  gemm_tiled_batched<T, T, T, Space>(1, M, N, K, {A.data(), static_cast<int64_t>(A.stride_0()), 1},
                                     {B.data(), static_cast<int64_t>(B.stride_0()), 1},
                                     {C.data(), static_cast<int64_t>(C.stride_0()), 1});
}

}  // namespace sp::kernels
