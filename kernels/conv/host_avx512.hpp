#pragma once
// SP_HOST_AVX512 is defined where a kernel may use an AVX-512 intrinsic
// tile: a host compilation for a CPU with AVX-512 F (32 vector registers of
// 64 bytes), never in a CUDA build (the same functions are compiled for the
// device). The operations have the names and meaning of host_avx2.hpp's.
#if defined(__AVX512F__) && !defined(KOKKOS_ENABLE_CUDA) && !defined(__CUDA_ARCH__) && !defined(__NVCC__)
#define SP_HOST_AVX512 1
#include <immintrin.h>

namespace sp::conv::detail {

// One 512-bit vector of T; L = 0: no vector path for T.
template <class T>
struct Avx512 {
  static constexpr int L = 0;
};

template <>
struct Avx512<float> {
  using V = __m512;
  static constexpr int L = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V bcast(const float* p) { return _mm512_set1_ps(*p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V set1(float v) { return _mm512_set1_ps(v); }
  static V relu(V a) { return _mm512_max_ps(a, _mm512_setzero_ps()); }  // NaN and -0 give +0, as activate()
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
};

template <>
struct Avx512<double> {
  using V = __m512d;
  static constexpr int L = 8;
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V bcast(const double* p) { return _mm512_set1_pd(*p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V set1(double v) { return _mm512_set1_pd(v); }
  static V relu(V a) { return _mm512_max_pd(a, _mm512_setzero_pd()); }  // NaN and -0 give +0, as activate()
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
};

}  // namespace sp::conv::detail
#endif
