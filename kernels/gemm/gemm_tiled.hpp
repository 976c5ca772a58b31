#pragma once
// C = A * B (row-major, any M, N, K), tiled for the memory hierarchy as
// the GotoBLAS scheme (Goto and van de Geijn 2008): each team owns an MC x NC block of C; for every KC-long
// slice of K it packs the A block (MC x KC) and B block (KC x NC) into team
// scratch, sized to sit in the per-core cache (L2 on a CPU, shared memory on
// a GPU), and each thread then accumulates MR x NR register tiles from them.
// The same source serves every back end; only the tile sizes differ.
#include <Kokkos_Core.hpp>
#include <cstdint>

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

template <class T, class Space>
struct GemmTiles {
  // CPU (BLIS-style): the MR x NR accumulator tile takes 2 x MR vector
  // registers (16 of AVX-512's 32, 12 of AVX2's 16), enough independent FMAs
  // to hide their latency; KC x NR of packed B stays in L1, the MC x KC block
  // of A and the KC x NC block of B in L2.
#if defined(__AVX512F__)
  static constexpr int VEC = 64;  // bytes per vector register
  static constexpr int MR = 8;
#else
  static constexpr int VEC = 32;
  static constexpr int MR = 6;
#endif
  static constexpr int NR = 2 * VEC / static_cast<int>(sizeof(T));
  static constexpr int MC = 16 * MR;
  static constexpr int NC = 8 * NR;
  static constexpr int KC = 256;
};

#ifdef KOKKOS_ENABLE_CUDA
template <class T>
struct GemmTiles<T, Kokkos::Cuda> {
  // GPU: a 64 x 64 block per team of 256 threads, 4 x 4 outputs per thread,
  // 16-deep K slices in shared memory.
  static constexpr int NR = 4, MR = 4, MC = 64, NC = 64, KC = 16;
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
void gemm_tiled_batched(int batch, int M, int N, int K, GemmOperand<const SA> A, GemmOperand<const SB> B,
                        GemmOperand<Acc> C, bool accumulate = false) {
  using T = Acc;
  using Tiles = GemmTiles<T, Space>;
  constexpr int MR = Tiles::MR, NR = Tiles::NR, MC = Tiles::MC, NC = Tiles::NC, KC = Tiles::KC;
  static_assert(MC % MR == 0 && NC % NR == 0, "blocks must hold whole register tiles");
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<T*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  if (batch <= 0 || M <= 0 || N <= 0) return;

  const int mblocks = (M + MC - 1) / MC, nblocks = (N + NC - 1) / NC, blocks = mblocks * nblocks;
  const size_t scratch = Scratch::shmem_size(MC * KC) + Scratch::shmem_size(KC * NC);
#ifdef KOKKOS_ENABLE_CUDA
  constexpr int team = std::is_same<Space, Kokkos::Cuda>::value ? (MC / MR) * (NC / NR) : 1;
  Policy policy(batch * blocks, team);
#else
  Policy policy(batch * blocks, 1);
#endif

  Kokkos::parallel_for(
      "gemm_tiled", policy.set_scratch_size(0, Kokkos::PerTeam(scratch)), KOKKOS_LAMBDA(const Member& m) {
        const int bt = m.league_rank() / blocks, blk = m.league_rank() % blocks;
        const int i0 = (blk / nblocks) * MC;
        const int j0 = (blk % nblocks) * NC;
        const SA* a_ = A.base(bt);
        const SB* b_ = B.base(bt);
        T* c_ = C.base(bt);
        const int64_t ars = A.rs, acs = A.cs, brs = B.rs, bcs = B.cs, crs = C.rs, ccs = C.cs;
        // Packed layouts: Ap[ir][k][r] (MR-row micro-panels), Bp[jr][k][c] (NR-column micro-panels),
        // zero-padded past M and N so the register tiles never test bounds.
        Scratch Ap(m.team_scratch(0), MC * KC);
        Scratch Bp(m.team_scratch(0), KC * NC);
        if (K <= 0) {  // empty sum: C = 0, or C unchanged when accumulating
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, MC), [&](const int i) {
            if (accumulate || i0 + i >= M) return;
            for (int j = j0; j < N && j < j0 + NC; ++j) c_[(i0 + i) * crs + j * ccs] = T(0);
          });
          return;
        }
        for (int k0 = 0; k0 < K; k0 += KC) {
          const int kc = K - k0 < KC ? K - k0 : KC;
          m.team_barrier();
          // Packing reads along the operand's contiguous direction: a row of
          // A (or, for a transposed A, a k) per thread; a k of B (or, for a
          // transposed B, a column) per thread. Only the copy order differs.
          if (acs == 1 || ars != 1) {
            Kokkos::parallel_for(Kokkos::TeamThreadRange(m, MC), [&](const int i) {
              const int gi = i0 + i;
              T* dst = &Ap((i / MR) * (MR * kc) + i % MR);
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
                Ap((i / MR) * (MR * kc) + k * MR + i % MR) = i0 + i < M ? gemm_widen<T>(src[i0 + i], 0) : T(0);
            });
          }
          if (bcs == 1 || brs != 1) {
            Kokkos::parallel_for(Kokkos::TeamThreadRange(m, kc), [&](const int k) {
              const SB* src = b_ + (k0 + k) * brs;
              for (int jr = 0; jr < NC / NR; ++jr) {
                T* dst = &Bp(jr * (NR * kc) + k * NR);
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
              T* dst = &Bp((j / NR) * (NR * kc) + j % NR);
              if (j0 + j < N) {
                const SB* src = b_ + (j0 + j) * bcs + k0;
                for (int k = 0; k < kc; ++k) dst[k * NR] = gemm_widen<T>(src[k], 0);
              } else {
                for (int k = 0; k < kc; ++k) dst[k * NR] = T(0);
              }
            });
          }
          m.team_barrier();
          const bool fresh = k0 == 0 && !accumulate;
          // jr outer, ir inner: a KC x NR panel of B is reused across all of A's rows.
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, (NC / NR) * (MC / MR)), [&](const int t) {
            const int jr = t / (MC / MR), ir = t % (MC / MR);
            const int gi = i0 + ir * MR, gj = j0 + jr * NR;
            if (gi >= M || gj >= N) return;
            const T* a = &Ap(ir * MR * kc);
            const T* b = &Bp(jr * NR * kc);
            T acc[MR][NR];
            gemm_micro<T, MR, NR>(kc, a, b, acc);
            const int rmax = M - gi < MR ? M - gi : MR, cmax = N - gj < NR ? N - gj : NR;
            for (int r = 0; r < rmax; ++r)
              for (int c = 0; c < cmax; ++c) {
                T& out = c_[(gi + r) * crs + (gj + c) * ccs];
                out = (fresh ? T(0) : out) + acc[r][c];
              }
          });
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
