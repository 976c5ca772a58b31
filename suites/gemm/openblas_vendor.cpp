// OpenBLAS as the manifest records it: the kernel core it dispatched to and
// why that one (openblas_core.hpp), its build configuration and threading
// (OpenMP: the Kokkos kernels' runtime; the build prefers it, CMakeLists.txt),
// and its thread count, set to the run's threads per rank so that the
// baseline and the Kokkos kernel run on the same threads (Gemm::setup sets it
// again for every case).
#ifdef SP_HAVE_OPENBLAS
#include <cblas.h>

#include <strings.h>

#include <cstdlib>

#include "scaleproof/vendors.hpp"
#include "suites/gemm/openblas_core.hpp"

namespace {

// Which threading the library was built with (openblas_get_parallel()).
const char* parallel_name(int p) { return p == 2 ? "OpenMP" : p == 1 ? "pthreads" : "sequential"; }

// How the core was chosen: by scaleproof, by the user's OPENBLAS_CORETYPE, or by the library.
std::string core_rule() {
  const std::string ours = sp::vendor_env_setting("OPENBLAS_CORETYPE");
  if (!ours.empty()) {
    const char* asked = std::getenv("OPENBLAS_CORETYPE");
    const bool taken = asked && strcasecmp(asked, openblas_get_corename()) == 0;
    return "set by scaleproof, " + ours + (taken ? "" : " (not the core that ran: the library did not take it)");
  }
  if (const char* user = std::getenv("OPENBLAS_CORETYPE")) return std::string("OPENBLAS_CORETYPE=") + user + " as set";
  return "the library's own CPU detection";
}

sp::VendorFacts describe_openblas(int threads) {
  openblas_set_num_threads(threads);
  const std::string core = openblas_get_corename();
  sp::VendorFacts facts = {
      {"core", core},
      {"core_rule", core_rule()},
      {"config", openblas_get_config()},
      {"parallel", parallel_name(openblas_get_parallel())},
      {"threads", std::to_string(openblas_get_num_threads())},
      {"threads_rule", "openblas_set_num_threads(threads per rank): the Kokkos kernel's thread count"}};
  // A core below the CPU's level that still runs (a user's OPENBLAS_CORETYPE,
  // kept as set, or a setting the library did not take) handicaps the baseline.
  const std::string best = sp::gemm::openblas_core_override(core, sp::host_cpu_vectors());
  if (!best.empty()) facts.push_back({sp::kVendorNotAtBest, "core " + core + " runs where this CPU takes " + best});
  return facts;
}

// The library's best core for this CPU where its detection fell back to an older one.
std::vector<sp::VendorEnv> openblas_env() {
  const std::string detected = openblas_get_corename();
  const std::string want = sp::gemm::openblas_core_override(detected, sp::host_cpu_vectors());
  if (want.empty()) return {};
  return {{"OPENBLAS_CORETYPE", want,
           "the library's CPU detection chose " + detected + ", a core below this CPU's vector instructions"}};
}

SP_REGISTER_VENDOR("openblas", describe_openblas);
SP_REGISTER_VENDOR_ENV(openblas_env);

}  // namespace
#endif
