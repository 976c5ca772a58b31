#pragma once
// Which OpenBLAS kernel core a CPU should run. A DYNAMIC_ARCH OpenBLAS picks
// its core by CPU model when it is loaded, and a model newer than the library
// falls back to its oldest kernels: Debian 12's 0.3.21 runs "Prescott" (SSE3)
// on Xeons with AVX-512 that it does not know, at a fraction of its speed
// there. The baseline must run the library's best core for the CPU's vector
// instructions, so a core below the CPU's level is replaced (through
// OPENBLAS_CORETYPE, openblas_vendor.cpp).
#include <string>

#include "scaleproof/host.hpp"

namespace sp::gemm {

// The cores' vector instructions are CpuVectors' levels (scaleproof/host.hpp):
// AVX2 + FMA: Haswell, Zen; AVX-512: SkylakeX; and BF16: Cooperlake.

// Vector level of an OpenBLAS core name (openblas_get_corename(), any case):
// 1 SSE2/SSE3 cores, 2 AVX, 3 AVX2 + FMA, 4 AVX-512; 0 for a name not listed
// here (a core newer than this table, which is then never replaced).
int openblas_core_level(const std::string& core);

// The core for a CPU: Cooperlake, SkylakeX or Haswell, "" below AVX2.
std::string openblas_core_for(const CpuVectors& cpu);

// The core to force where `detected` is a listed core below the CPU's level;
// "" where the detected one stands.
std::string openblas_core_override(const std::string& detected, const CpuVectors& cpu);

}  // namespace sp::gemm
