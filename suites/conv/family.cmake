# oneDNN is the convolution family's CPU vendor baseline (host memory only);
# cuDNN its GPU one, looked for only in CUDA builds.
if(SP_ENABLE_ONEDNN)
  target_link_libraries(${SP_FAMILY_TARGET} PUBLIC DNNL::dnnl)
  target_compile_definitions(${SP_FAMILY_TARGET} PUBLIC SP_HAVE_ONEDNN)
endif()

# cuDNN: the GPU vendor baseline, found by the top-level CMakeLists in CUDA
# builds; the variant is compiled there and runs only on a GPU machine.
if(TARGET sp_cudnn)
  target_link_libraries(${SP_FAMILY_TARGET} PUBLIC sp_cudnn)
endif()

if(SP_BUILD_TESTS)
  # Unit tests of the family: closed forms vs counted layers, receptive-field
  # composition, the checker rejecting a wrong kernel, bad-input validation.
  sp_unit_tests(sp_conv_tests ${CMAKE_CURRENT_LIST_DIR}/tests/test_conv_models.cpp
                              ${CMAKE_CURRENT_LIST_DIR}/tests/test_conv_check.cpp
                              ${CMAKE_CURRENT_LIST_DIR}/tests/test_conv_order.cpp
                              ${CMAKE_CURRENT_LIST_DIR}/tests/test_onednn_isa.cpp)
  # oneDNN's dispatch ISA in the manifest, and a user's cap below the CPU's
  # level reported as not at its best, end to end.
  if(SP_ENABLE_ONEDNN)
    add_test(NAME onednn_isa_level COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tests/onednn_isa_test.sh
                                           $<TARGET_FILE:scaleproof>)
    set_tests_properties(onednn_isa_level PROPERTIES LABELS "cli;conv" ENVIRONMENT "${SP_TEST_ENV}")
  endif()

  # The AVX2 tiles on a host whose native code is AVX-512 (where the unit tests above run the
  # AVX-512 tiles): a unit compiled without AVX-512 that instantiates the kernels itself, linked
  # without the family's objects. Elsewhere the tests above already run whatever tiles the host has.
  if(SP_NATIVE AND NOT SP_ENABLE_CUDA)
    include(CheckCXXSourceCompiles)
    set(CMAKE_REQUIRED_FLAGS -march=native)
    check_cxx_source_compiles("#ifndef __AVX512F__\n#error no AVX-512\n#endif\nint main() { return 0; }"
                              SP_NATIVE_AVX512)
    unset(CMAKE_REQUIRED_FLAGS)
    if(SP_NATIVE_AVX512)
      add_executable(sp_conv_avx2_tests ${CMAKE_CURRENT_LIST_DIR}/tests/test_conv_avx2.cpp
                                        ${PROJECT_SOURCE_DIR}/kernels/conv/conv_spec.cpp
                                        ${PROJECT_SOURCE_DIR}/harness/tests/test_main.cpp)
      target_compile_options(sp_conv_avx2_tests PRIVATE -mno-avx512f)
      target_link_libraries(sp_conv_avx2_tests PRIVATE sp_harness GTest::gtest)
      _sp_labels(labels unit)
      gtest_discover_tests(sp_conv_avx2_tests DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "${labels}" ENVIRONMENT
                                                                                  "${SP_TEST_ENV}")
    endif()
  endif()

  # Bad input: one line on stderr, exit 2, nothing written.
  sp_cli_test(conv_stride_zero 2 check --technique conv2d --set stride=0)
  sp_cli_test(conv_negative_pad 2 check --technique conv2d --set pad=-1)
  sp_cli_test(conv_groups_not_dividing 2 check --technique conv2d --set groups=5)
  sp_cli_test(conv_kernel_too_large 2 check --technique conv2d --set kh=40 --set pad=0)
  sp_cli_test(conv_depthwise_kernel_too_large 2 bench --technique conv_depthwise --set k=99 --set pad=0)
  sp_cli_test(conv_unknown_activation 2 check --technique conv_pointwise --set act=tanh)
  sp_cli_test(conv_block_groups_not_dividing 2 run --technique block_group --set g=7)
  sp_cli_test(conv_table_without_results 2 conv-table /nonexistent/results)
endif()

# `scaleproof conv-table` reads results JSON.
target_link_libraries(${SP_FAMILY_TARGET} PUBLIC nlohmann_json::nlohmann_json CLI11::CLI11)

if(SP_BUILD_TESTS)
  # Deformable conv: an offsets tensor of the wrong shape, unknown version or offsets.
  sp_cli_test(conv_deformable_offsets_wrong_shape 2 check --technique conv_deformable --set offset_shape=1x18x5x5)
  sp_cli_test(conv_deformable_offsets_malformed 2 check --technique conv_deformable --set offset_shape=18x5)
  sp_cli_test(conv_deformable_unknown_version 2 bench --technique conv_deformable --set version=v3)
  sp_cli_test(conv_deformable_dg_not_dividing 2 check --technique conv_deformable --set dg=5)
endif()
if(SP_BUILD_TESTS)
  sp_cli_test(conv_mac_without_results 2 conv-mac /nonexistent/results)
endif()
