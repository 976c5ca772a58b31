# cuBLAS (cublasGemmEx, 16-bit inputs, fp32 compute) is mp_gemm's vendor
# variant when the Kokkos back end is CUDA.
if(SP_ENABLE_CUDA)
  target_link_libraries(${SP_FAMILY_TARGET} PUBLIC CUDA::cublas)
  target_compile_definitions(${SP_FAMILY_TARGET} PUBLIC SP_HAVE_CUBLAS)
endif()

# OpenBLAS sgemm is lowbit_gemm's vendor baseline (fp32 GEMM of the same shape).
if(SP_ENABLE_OPENBLAS)
  target_link_libraries(${SP_FAMILY_TARGET} PUBLIC BLAS::BLAS)
  target_include_directories(${SP_FAMILY_TARGET} PUBLIC ${CBLAS_INCLUDE_DIR})
  target_compile_definitions(${SP_FAMILY_TARGET} PUBLIC SP_HAVE_OPENBLAS)
endif()

# Unit tests of the precision family's building blocks (16-bit conversions,
# loss scaler, quantization edge cases, low-bit codes, checkpoint memory, bad parameters),
# and command-line tests of its bad-input contract (one line, exit 2).
if(NOT SP_BUILD_TESTS)
  return()
endif()
sp_unit_tests(sp_precision_tests
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_float16.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_loss_scaler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_quantize.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_checkpoint_prune.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tests/test_lowbit.cpp)

sp_cli_test(precision_sparsity_one 2 check --technique pruning --set sparsity=1)
sp_cli_test(precision_sparsity_negative 2 check --technique pruning --set sparsity=-0.1)
sp_cli_test(precision_sparsity_nan 2 run --technique pruning --set sparsity=nan)
sp_cli_test(precision_checkpoint_k_above_n 2 bench --technique checkpointing --set k=30)
sp_cli_test(precision_unknown_storage 2 check --technique mp_gemm --set dtype=fp8)
sp_cli_test(precision_unknown_scaling 2 check --technique int8_gemm --set scaling=row)
sp_cli_test(precision_amp_bad_lr 2 check --technique amp_mlp --set lr=-1)
sp_cli_test(precision_amp_unknown_scaler 2 check --technique amp_mlp --set scaling=auto)
sp_cli_test(precision_lowbit_group_not_dividing_k 2 check --technique lowbit_gemm --set K=100 --set group=32)
sp_cli_test(precision_lowbit_bits_3 2 check --technique lowbit_gemm --set bits=3)
sp_cli_test(precision_lowbit_bits_16 2 bench --technique lowbit_gemm --set bits=16)
sp_cli_test(precision_lowbit_binary_4bit 2 check --technique lowbit_gemm --set scheme=binary --set bits=4)
sp_cli_test(precision_lowbit_log2_8bit 2 check --technique lowbit_gemm --set scheme=log2 --set bits=8)
sp_cli_test(precision_lowbit_unknown_scheme 2 run --technique lowbit_gemm --set scheme=ternary)
sp_cli_test(precision_lowrank_rank_above_min 2 check --technique lowrank --set M=16 --set N=8 --set r=9)
sp_cli_test(precision_lowrank_rank_zero 2 bench --technique lowrank --set r=0)
