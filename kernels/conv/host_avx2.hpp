#pragma once
// SP_HOST_AVX2 is defined where a kernel may use its AVX2 + FMA intrinsic
// tile: a host compilation for a CPU with AVX2 and FMA but without AVX-512
// (16 vector registers, where GCC's plain-loop code spills the tile), and
// never in a CUDA build (the same functions are compiled for the device).
#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__) && !defined(KOKKOS_ENABLE_CUDA) && \
    !defined(__CUDA_ARCH__) && !defined(__NVCC__)
#define SP_HOST_AVX2 1
#include <immintrin.h>
#endif
