// OpenBLAS as the manifest records it: the kernel core it dispatched to, its
// build configuration and threading (OpenMP: the Kokkos kernels' runtime;
// the build prefers it, CMakeLists.txt), and its thread count, set to the
// run's threads per rank so that the baseline and the Kokkos kernel run on
// the same threads (Gemm::setup sets it again for every case).
#ifdef SP_HAVE_OPENBLAS
#include <cblas.h>

#include "scaleproof/vendors.hpp"

namespace {

// Which threading the library was built with (openblas_get_parallel()).
const char* parallel_name(int p) { return p == 2 ? "OpenMP" : p == 1 ? "pthreads" : "sequential"; }

sp::VendorFacts describe_openblas(int threads) {
  openblas_set_num_threads(threads);
  return {{"core", openblas_get_corename()},
          {"config", openblas_get_config()},
          {"parallel", parallel_name(openblas_get_parallel())},
          {"threads", std::to_string(openblas_get_num_threads())},
          {"threads_rule", "openblas_set_num_threads(threads per rank): the Kokkos kernel's thread count"}};
}

SP_REGISTER_VENDOR("openblas", describe_openblas);

}  // namespace
#endif
