# Test helpers shared by the harness and every family (families call them
# from suites/<family>/family.cmake, so they are defined before discovery).
include(GoogleTest)
set(SP_CLI_TEST_SCRIPT ${PROJECT_SOURCE_DIR}/harness/tests/cli_test.sh)
# One thread per test process: CTest runs tests in parallel on few cores.
set(SP_TEST_ENV "OMP_NUM_THREADS=1;OMP_PROC_BIND=false")

# Labels: the kind of test, plus the family when called from a family.cmake.
function(_sp_labels out kind)
  if(SP_FAMILY)
    set(${out} "${kind};${SP_FAMILY}" PARENT_SCOPE)
  else()
    set(${out} "${kind}" PARENT_SCOPE)
  endif()
endfunction()

# sp_cli_test(NAME EXPECTED_RC ARGS...): `scaleproof ARGS` exits with
# EXPECTED_RC; for 2 also exactly one `scaleproof: error:` line and nothing
# written (harness/tests/cli_test.sh). The test is named cli_NAME.
function(sp_cli_test name expect_rc)
  _sp_labels(labels cli)
  add_test(NAME cli_${name} COMMAND bash ${SP_CLI_TEST_SCRIPT} $<TARGET_FILE:scaleproof_testing> ${expect_rc} ${ARGN})
  set_tests_properties(cli_${name} PROPERTIES LABELS "${labels}" ENVIRONMENT "${SP_TEST_ENV}")
endfunction()

# sp_cli_test_mpi(NAME NP EXPECTED_RC ARGS...): the same under mpiexec -n NP.
function(sp_cli_test_mpi name np expect_rc)
  if(NOT SP_ENABLE_MPI)
    return()
  endif()
  _sp_labels(labels "cli;mpi")
  add_test(NAME cli_${name} COMMAND bash ${SP_CLI_TEST_SCRIPT} ${MPIEXEC_EXECUTABLE} ${expect_rc}
                                    ${MPIEXEC_NUMPROC_FLAG} ${np} $<TARGET_FILE:scaleproof_testing> ${ARGN})
  set_tests_properties(cli_${name} PROPERTIES LABELS "${labels}" ENVIRONMENT "${SP_TEST_ENV}" PROCESSORS 2)
endfunction()

# sp_mpi_gtests(PREFIX TARGET FILTER TIMEOUT KIND NP...): the tests of the
# GoogleTest executable TARGET that match FILTER, under mpiexec -n NP for
# each NP, one CTest entry PREFIX_npNP each, labelled KIND, mpi and the family.
function(sp_mpi_gtests prefix target filter timeout kind)
  if(NOT SP_ENABLE_MPI)
    return()
  endif()
  _sp_labels(labels "${kind};mpi")
  foreach(np ${ARGN})
    add_test(NAME ${prefix}_np${np} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                                            $<TARGET_FILE:${target}> --gtest_filter=${filter} --gtest_brief=1)
    set_tests_properties(${prefix}_np${np} PROPERTIES LABELS "${labels}" ENVIRONMENT "${SP_TEST_ENV}" PROCESSORS 2
                                                      TIMEOUT ${timeout})
  endforeach()
endfunction()

# sp_unit_tests(TARGET SOURCES...): a GoogleTest executable of the calling
# family, run with MPI and Kokkos up (harness/tests/test_main.cpp), one CTest
# entry per test.
function(sp_unit_tests target)
  add_executable(${target} ${ARGN} ${PROJECT_SOURCE_DIR}/harness/tests/test_main.cpp)
  target_link_libraries(${target} PRIVATE sp_harness GTest::gtest ${SP_FAMILY_TARGET})
  _sp_labels(labels unit)
  gtest_discover_tests(${target} DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "${labels}" ENVIRONMENT "${SP_TEST_ENV}")
endfunction()
