# Model parallelism: the `scaleproof pipeline` and `scaleproof model parallel`
# subcommands use CLI11 and nlohmann-json; unit tests are their own executable.
target_link_libraries(${SP_FAMILY_TARGET} PUBLIC CLI11::CLI11 nlohmann_json::nlohmann_json)

if(SP_BUILD_TESTS)
  include(GoogleTest)
  file(GLOB _mp_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/tests/*.cpp)
  add_executable(sp_modelparallel_tests ${_mp_tests})
  target_link_libraries(sp_modelparallel_tests PRIVATE sp_harness GTest::gtest ${SP_FAMILY_TARGET})
  gtest_discover_tests(sp_modelparallel_tests DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "unit;modelparallel"
    ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false")

  # Bad input at the command line: one line, exit 2, nothing written.
  function(sp_mp_cli_test name)
    add_test(NAME cli_mp_${name}
             COMMAND bash ${PROJECT_SOURCE_DIR}/harness/tests/cli_test.sh $<TARGET_FILE:scaleproof> 2 ${ARGN})
    set_tests_properties(cli_mp_${name} PROPERTIES LABELS "cli;modelparallel"
      ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false")
  endfunction()
endif()

# The timeline chart script run by `scaleproof pipeline` (system Python with matplotlib).
target_compile_definitions(${SP_FAMILY_TARGET} PRIVATE
  SP_MP_PLOT_SCRIPT="${CMAKE_CURRENT_LIST_DIR}/plots/timeline.py")
