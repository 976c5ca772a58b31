#include "scaleproof/host.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace sp {

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * page : INFINITY;
}

CpuVectors host_cpu_vectors() {
  CpuVectors c;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  c.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  c.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
  c.avx512_bf16 = c.avx512 && __builtin_cpu_supports("avx512bf16");
#endif
  return c;
}

double reported_last_level_cache_bytes() {
  // Asked once: kernels consult it on every launch.
  static const double bytes = [] {
    long best = 0;
#if defined(_SC_LEVEL1_DCACHE_SIZE)
    for (int name : {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL4_CACHE_SIZE})
      best = std::max(best, sysconf(name));
#endif
    return static_cast<double>(best);
  }();
  return bytes;
}

double last_level_cache_bytes() {
  const double reported = reported_last_level_cache_bytes();
  return reported > 0 ? reported : 32.0 * (1 << 20);
}

}  // namespace sp
