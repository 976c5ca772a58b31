# Model parallelism: the `scaleproof pipeline` and `scaleproof model parallel`
# subcommands use CLI11 and nlohmann-json; unit tests are their own executable.
target_link_libraries(${SP_FAMILY_TARGET} PUBLIC CLI11::CLI11 nlohmann_json::nlohmann_json)

if(SP_BUILD_TESTS)
  include(GoogleTest)
  file(GLOB _mp_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/tests/*.cpp)
  # The harness's test main (MPI, then Kokkos, around RUN_ALL_TESTS).
  add_executable(sp_modelparallel_tests ${_mp_tests} ${PROJECT_SOURCE_DIR}/harness/tests/test_main.cpp)
  target_link_libraries(sp_modelparallel_tests PRIVATE sp_harness GTest::gtest ${SP_FAMILY_TARGET})
  gtest_discover_tests(sp_modelparallel_tests DISCOVERY_MODE PRE_TEST PROPERTIES LABELS unit
    ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false")

  # Bad input at the command line: one line, exit 2, nothing written.
  # sp_mp_cli_test(name PROGRAM ARGS...): PROGRAM is scaleproof or mpiexec running it.
  function(sp_mp_cli_test name program)
    add_test(NAME cli_mp_${name}
             COMMAND bash ${PROJECT_SOURCE_DIR}/harness/tests/cli_test.sh ${program} 2 ${ARGN})
    set_tests_properties(cli_mp_${name} PROPERTIES LABELS "cli;modelparallel"
      ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false")
  endfunction()
endif()

# The timeline chart script run by `scaleproof pipeline` (system Python with matplotlib).
target_compile_definitions(${SP_FAMILY_TARGET} PRIVATE
  SP_MP_PLOT_SCRIPT="${CMAKE_CURRENT_LIST_DIR}/plots/timeline.py")

# Bad input at the command line: one line on stderr, exit 2, nothing written.
if(SP_BUILD_TESTS)
  sp_mp_cli_test(interleaved_m_not_multiple_of_p $<TARGET_FILE:scaleproof>
    pipeline --schedule interleaved -p 2 -m 3 -v 2 --out results)
  sp_mp_cli_test(layers_fewer_than_stages_times_v $<TARGET_FILE:scaleproof>
    pipeline --schedule interleaved -p 1 -m 4 -v 4 -L 3 --out results)
  sp_mp_cli_test(p_larger_than_ranks $<TARGET_FILE:scaleproof> pipeline --schedule 1f1b -p 2 -m 4 --out results)
  sp_mp_cli_test(v_without_interleaving $<TARGET_FILE:scaleproof> pipeline --schedule gpipe -p 1 -m 4 -v 2 --out results)
  sp_mp_cli_test(unknown_schedule $<TARGET_FILE:scaleproof> pipeline --schedule zb -p 1 --out results)
  sp_mp_cli_test(technique_layers_fewer_than_chunks $<TARGET_FILE:scaleproof> check --technique pipeline_interleaved --set L=1)
  sp_mp_cli_test(heads_not_divisible_by_t $<TARGET_FILE:scaleproof> model parallel --tp 5)
  sp_mp_cli_test(hidden_not_divisible_by_heads $<TARGET_FILE:scaleproof> check --technique tp_attention --set h=25)
  if(SP_ENABLE_MPI)
    # At 2 ranks t = 2: 3 heads and ffn 25 cannot be split.
    sp_mp_cli_test(np2_heads_not_divisible_by_t ${MPIEXEC_EXECUTABLE}
      ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:scaleproof> check --technique tp_attention --set heads=3)
    sp_mp_cli_test(np2_ffn_not_divisible_by_t ${MPIEXEC_EXECUTABLE}
      ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:scaleproof> check --technique tp_mlp --set ffn=25)
    sp_mp_cli_test(np2_hidden_not_divisible_by_t ${MPIEXEC_EXECUTABLE}
      ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:scaleproof> check --technique tp_transformer_layer --set h=25,heads=25)
  endif()
endif()
