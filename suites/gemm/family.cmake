# OpenBLAS is the GEMM family's vendor baseline.
if(SP_ENABLE_OPENBLAS)
  target_link_libraries(${SP_FAMILY_TARGET} PUBLIC BLAS::BLAS)
  target_include_directories(${SP_FAMILY_TARGET} PUBLIC ${CBLAS_INCLUDE_DIR})
  target_compile_definitions(${SP_FAMILY_TARGET} PUBLIC SP_HAVE_OPENBLAS)
endif()
# cuBLAS is the vendor baseline when the Kokkos back end is CUDA.
if(SP_ENABLE_CUDA)
  target_link_libraries(${SP_FAMILY_TARGET} PUBLIC CUDA::cublas)
  target_compile_definitions(${SP_FAMILY_TARGET} PUBLIC SP_HAVE_CUBLAS)
endif()
