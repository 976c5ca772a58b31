#pragma once
// Facts about the host the process runs on, read once from the C library
// and the compiler's CPU checks.

namespace sp {

// The x86-64 vector instructions this CPU has, as vendor libraries tier
// their kernels (the compiler's cpu-supports checks, which include the
// operating system's support for the registers); all false elsewhere.
struct CpuVectors {
  bool avx2_fma = false;     // AVX2 and FMA
  bool avx512 = false;       // AVX-512 F, CD, BW, DQ and VL
  bool avx512_bf16 = false;  // and AVX-512 BF16
};
CpuVectors host_cpu_vectors();

// The node's physical memory (infinite if unknown).
double physical_memory_bytes();
// The largest data or unified cache the C library reports, in bytes; 0
// where it reports none (for a rule that must not guess, e.g. STREAM's).
double reported_last_level_cache_bytes();
// The same, or 32 MiB where none is reported (for sizing: a kernel's
// blocking, a benchmark's working set).
double last_level_cache_bytes();

}  // namespace sp
