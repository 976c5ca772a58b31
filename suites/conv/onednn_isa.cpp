// oneDNN ISA names and the shortfall rule (onednn_isa.hpp).
#ifdef SP_HAVE_ONEDNN
#include "suites/conv/onednn_isa.hpp"

#include <oneapi/dnnl/dnnl_types.h>

#include <cstdio>
#include <utility>

namespace sp::conv {

std::string onednn_isa_name(unsigned isa) {
  static const std::pair<unsigned, const char*> kNames[] = {{dnnl_cpu_isa_all, "all"},
                                                            {dnnl_cpu_isa_sse41, "sse41"},
                                                            {dnnl_cpu_isa_avx, "avx"},
                                                            {dnnl_cpu_isa_avx2, "avx2"},
                                                            {dnnl_cpu_isa_avx512_mic, "avx512_mic"},
                                                            {dnnl_cpu_isa_avx512_mic_4ops, "avx512_mic_4ops"},
                                                            {dnnl_cpu_isa_avx512_core, "avx512_core"},
                                                            {dnnl_cpu_isa_avx512_core_vnni, "avx512_core_vnni"},
                                                            {dnnl_cpu_isa_avx512_core_bf16, "avx512_core_bf16"},
                                                            {dnnl_cpu_isa_avx512_core_amx, "avx512_core_amx"},
                                                            {dnnl_cpu_isa_avx2_vnni, "avx2_vnni"}};
  for (auto& [value, name] : kNames)
    if (value == isa) return name;
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%x", isa);
  return hex;
}

std::string onednn_isa_shortfall(unsigned isa, const CpuVectors& cpu) {
  // oneDNN's ISA values are feature masks: each holds the bits of every ISA
  // below it (avx512_core = 0x27 holds avx2 = 0x7).
  const unsigned want = cpu.avx512     ? unsigned(dnnl_cpu_isa_avx512_core)
                        : cpu.avx2_fma ? unsigned(dnnl_cpu_isa_avx2)
                                       : 0u;
  if ((isa & want) == want) return "";
  return "ISA " + onednn_isa_name(isa) + " dispatched where this CPU has " + onednn_isa_name(want);
}

}  // namespace sp::conv
#endif
