#include "scaleproof/kokkos_compat.hpp"

#include <string>

namespace sp::kx {

std::string version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

std::string backends_string() {
  std::string s;
  auto add = [&](const char* n) { s += s.empty() ? n : std::string("+") + n; };
#ifdef KOKKOS_ENABLE_SERIAL
  add("Serial");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  add("OpenMP");
#endif
#ifdef KOKKOS_ENABLE_THREADS
  add("Threads");
#endif
#ifdef KOKKOS_ENABLE_CUDA
  add("Cuda");
#endif
  return s + " (default " + Kokkos::DefaultExecutionSpace::name() + ")";
}

}  // namespace sp::kx
