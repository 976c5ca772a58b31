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
if(SP_BUILD_TESTS)
  # The rule that picks OpenBLAS's core (unit), and the core a run records on
  # this machine's CPU, end to end through the restart (vendors.hpp).
  sp_unit_tests(sp_gemm_tests ${CMAKE_CURRENT_LIST_DIR}/tests/test_openblas_core.cpp)
  if(SP_ENABLE_OPENBLAS)
    add_test(NAME openblas_core_level COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tests/openblas_core_test.sh
                                              $<TARGET_FILE:scaleproof>)
    set_tests_properties(openblas_core_level PROPERTIES LABELS "cli;gemm" ENVIRONMENT "${SP_TEST_ENV}")
  endif()
endif()
