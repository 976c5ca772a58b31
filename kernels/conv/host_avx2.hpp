#pragma once
// SP_HOST_AVX2 is defined where a kernel may use its AVX2 + FMA intrinsic
// tile: a host compilation for a CPU with AVX2 and FMA but without AVX-512
// (16 vector registers, where GCC's plain-loop code spills the tile), and
// never in a CUDA build (the same functions are compiled for the device).
#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__) && !defined(KOKKOS_ENABLE_CUDA) && \
    !defined(__CUDA_ARCH__) && !defined(__NVCC__)
#define SP_HOST_AVX2 1
#include <immintrin.h>

#include <cstdint>

namespace sp::conv::detail {

// One 256-bit vector of T and the operations the intrinsic tiles use; L = 0: no vector path for T.
template <class T>
struct Avx2 {
  static constexpr int L = 0;
};
template <>
struct Avx2<float> {
  using V = __m256;
  static constexpr int L = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V set1(float v) { return _mm256_set1_ps(v); }
  static V relu(V a) { return _mm256_max_ps(a, _mm256_setzero_ps()); }  // NaN and -0 give +0, as activate()
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
};
template <>
struct Avx2<double> {
  using V = __m256d;
  static constexpr int L = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V bcast(const double* p) { return _mm256_broadcast_sd(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V set1(double v) { return _mm256_set1_pd(v); }
  static V relu(V a) { return _mm256_max_pd(a, _mm256_setzero_pd()); }  // NaN and -0 give +0, as activate()
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
};

// dst[i] = src[i] for i < n, the 32-byte-aligned part of dst with non-temporal stores: the lines go
// to memory without first being read in (a cached store reads each line it writes, a third more
// traffic for a layer that reads one array and writes another) and do not evict the input. For
// output that will not be read again from cache. The caller issues _mm_sfence() before another
// thread may read dst.
inline void stream_copy(float* __restrict dst, const float* __restrict src, int64_t n) {
  int64_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(dst + i) & 31) != 0; ++i) dst[i] = src[i];
  for (; i + 8 <= n; i += 8) _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
  for (; i < n; ++i) dst[i] = src[i];
}

}  // namespace sp::conv::detail
#endif
