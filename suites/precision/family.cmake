# cuBLAS (cublasGemmEx, 16-bit inputs, fp32 compute) is mp_gemm's vendor
# variant when the Kokkos back end is CUDA.
if(SP_ENABLE_CUDA)
  target_link_libraries(${SP_FAMILY_TARGET} PUBLIC CUDA::cublas)
  target_compile_definitions(${SP_FAMILY_TARGET} PUBLIC SP_HAVE_CUBLAS)
endif()

# Unit tests of the precision family's building blocks (16-bit conversions,
# loss scaler, quantization edge cases, checkpoint memory, bad parameters),
# and command-line tests of its bad-input contract (one line, exit 2).
if(NOT SP_BUILD_TESTS)
  return()
endif()
add_executable(sp_precision_tests
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_float16.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_loss_scaler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_quantize.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_checkpoint_prune.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_matmul_strided.cpp
  ${PROJECT_SOURCE_DIR}/harness/tests/test_main.cpp)
target_link_libraries(sp_precision_tests PRIVATE sp_harness GTest::gtest ${SP_FAMILY_TARGET})
include(GoogleTest)
gtest_discover_tests(sp_precision_tests DISCOVERY_MODE PRE_TEST PROPERTIES LABELS unit
  ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false")

function(sp_precision_cli name)
  add_test(NAME cli_precision_${name}
           COMMAND bash ${PROJECT_SOURCE_DIR}/harness/tests/cli_test.sh $<TARGET_FILE:scaleproof> 2 ${ARGN})
  set_tests_properties(cli_precision_${name} PROPERTIES LABELS cli ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false")
endfunction()
sp_precision_cli(sparsity_one check --technique pruning --set sparsity=1)
sp_precision_cli(sparsity_negative check --technique pruning --set sparsity=-0.1)
sp_precision_cli(sparsity_nan run --technique pruning --set sparsity=nan)
sp_precision_cli(checkpoint_k_above_n bench --technique checkpointing --set k=30)
sp_precision_cli(unknown_storage check --technique mp_gemm --set dtype=fp8)
sp_precision_cli(unknown_scaling check --technique int8_gemm --set scaling=row)
sp_precision_cli(amp_bad_lr check --technique amp_mlp --set lr=-1)
sp_precision_cli(amp_unknown_scaler check --technique amp_mlp --set scaling=auto)
