#pragma once
// The extents the tiled GEMM indexes: each matrix (M x K, K x N, M x N) at
// most 2^31 elements. Products are formed in 128 bits: an int64 product of
// three 2^32 sizes wraps to 0 and would pass.
#include <cstdint>

namespace sp::kernels {

inline bool gemm_extents_fit(int64_t m, int64_t n, int64_t k) {
  const __int128 limit = __int128(1) << 31;
  return __int128(m) * k <= limit && __int128(k) * n <= limit && __int128(m) * n <= limit;
}

inline constexpr const char* kGemmExtentsRule =
    "matrices above 2^31 elements are not supported (M x K, K x N and M x N)";

}  // namespace sp::kernels
