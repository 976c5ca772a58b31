#pragma once
// oneDNN's instruction set as the manifest records it: the one it dispatches
// to (dnnl_get_effective_cpu_isa(), which a user's ONEDNN_MAX_CPU_ISA or
// DNNL_MAX_CPU_ISA caps), named, and whether it falls below this CPU's vector
// level, where its convolutions are not the library's best.
#include <string>

#include "scaleproof/host.hpp"

namespace sp::conv {

// The name oneDNN gives a dnnl_cpu_isa_t value ("avx512_core_bf16"), or its
// value in hex for one newer than this table.
std::string onednn_isa_name(unsigned isa);

// "" where `isa` holds the CPU's level (AVX-512 core where it has AVX-512,
// else AVX2 where it has AVX2 and FMA), else why not.
std::string onednn_isa_shortfall(unsigned isa, const CpuVectors& cpu);

}  // namespace sp::conv
