#include "scaleproof/kokkos_compat.hpp"

#include <string>

namespace sp::kx {

std::string version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

int max_host_threads() {
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  return Kokkos::Impl::OpenMPExec::MAX_THREAD_COUNT;
#else
  return 512;
#endif
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
