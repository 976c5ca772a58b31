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
sp_unit_tests(sp_precision_tests
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_float16.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_loss_scaler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_quantize.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_checkpoint_prune.cpp)

sp_cli_test(precision_sparsity_one 2 check --technique pruning --set sparsity=1)
sp_cli_test(precision_sparsity_negative 2 check --technique pruning --set sparsity=-0.1)
sp_cli_test(precision_sparsity_nan 2 run --technique pruning --set sparsity=nan)
sp_cli_test(precision_checkpoint_k_above_n 2 bench --technique checkpointing --set k=30)
sp_cli_test(precision_unknown_storage 2 check --technique mp_gemm --set dtype=fp8)
sp_cli_test(precision_unknown_scaling 2 check --technique int8_gemm --set scaling=row)
sp_cli_test(precision_amp_bad_lr 2 check --technique amp_mlp --set lr=-1)
sp_cli_test(precision_amp_unknown_scaler 2 check --technique amp_mlp --set scaling=auto)
