// cuBLAS as the manifest records it: its version, and how the baselines call
// it. The library picks its kernel per shape by its own heuristic; the math
// mode keeps the arithmetic of the dtype, so the comparison with the
// project's kernel is at equal precision.
#ifdef SP_HAVE_CUBLAS
#include <cublas_v2.h>

#include <string>

#include "scaleproof/vendors.hpp"

namespace {

sp::VendorFacts describe_cublas(int) {
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  return {{"version", std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch)},
          {"calls",
           "gemm: cublasSgemm / cublasDgemm; mp_gemm: cublasGemmEx, 16-bit inputs, CUBLAS_COMPUTE_32F, "
           "CUBLAS_GEMM_DEFAULT"},
          {"math", "CUBLAS_DEFAULT_MATH: the dtype's own arithmetic (no TF32 for fp32)"},
          {"algorithm", "cuBLAS's heuristic per shape"}};
}

SP_REGISTER_VENDOR("cublas", describe_cublas);

}  // namespace
#endif
