// OpenBLAS core levels and the replacement rule (openblas_core.hpp).
#include "suites/gemm/openblas_core.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace sp::gemm {

int openblas_core_level(const std::string& core) {
  // The x86-64 cores of OpenBLAS's DYNAMIC_ARCH list (driver/others/dynamic.c), by the vector
  // instructions their kernels use.
  static const std::pair<const char*, int> kCores[] = {
      {"katmai", 1},        {"coppermine", 1},  {"northwood", 1},    {"prescott", 1},   {"banias", 1},
      {"atom", 1},          {"core2", 1},       {"penryn", 1},       {"dunnington", 1}, {"nehalem", 1},
      {"athlon", 1},        {"opteron", 1},     {"opteron_sse3", 1}, {"barcelona", 1},  {"nano", 1},
      {"bobcat", 1},        {"sandybridge", 2}, {"bulldozer", 2},    {"piledriver", 2}, {"steamroller", 2},
      {"excavator", 2},     {"haswell", 3},     {"zen", 3},          {"skylakex", 4},   {"cooperlake", 4},
      {"sapphirerapids", 4}};
  std::string c = core;
  std::transform(c.begin(), c.end(), c.begin(), [](unsigned char ch) { return std::tolower(ch); });
  for (auto& [name, level] : kCores)
    if (c == name) return level;
  return 0;
}

std::string openblas_core_for(const CpuVectors& cpu) {
  if (cpu.avx512) return cpu.avx512_bf16 ? "Cooperlake" : "SkylakeX";
  return cpu.avx2_fma ? "Haswell" : "";
}

std::string openblas_core_override(const std::string& detected, const CpuVectors& cpu) {
  const std::string want = openblas_core_for(cpu);
  const int level = openblas_core_level(detected);
  if (want.empty() || level == 0 || level >= openblas_core_level(want)) return "";
  return want;
}

}  // namespace sp::gemm
