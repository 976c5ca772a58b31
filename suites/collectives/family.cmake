# Collectives: the nccl-tests command uses the harness's size parser
# (parse_bytes); its unit tests and CLI tests live here.
target_link_libraries(${SP_FAMILY_TARGET} PUBLIC sp_harness)

if(SP_BUILD_TESTS)
  include(GoogleTest)
  add_executable(sp_coll_tests
    ${CMAKE_CURRENT_LIST_DIR}/tests/test_model.cpp
    ${CMAKE_CURRENT_LIST_DIR}/tests/test_fp16.cpp
    ${PROJECT_SOURCE_DIR}/harness/tests/test_main.cpp)  # the harness's: MPI and Kokkos up
  target_link_libraries(sp_coll_tests PRIVATE sp_harness GTest::gtest ${SP_FAMILY_TARGET})
  gtest_discover_tests(sp_coll_tests DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "unit;collectives"
    ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false")

  # Bad input to the collectives: one line on stderr, exit 2, nothing written.
  set(_cli ${PROJECT_SOURCE_DIR}/harness/tests/cli_test.sh)
  function(sp_coll_cli name expect_rc)
    add_test(NAME cli_coll_${name} COMMAND bash ${_cli} $<TARGET_FILE:scaleproof> ${expect_rc} ${ARGN})
    set_tests_properties(cli_coll_${name} PROPERTIES LABELS "cli;collectives"
      ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false")
  endfunction()
  sp_coll_cli(count_zero 2 run --technique all_reduce --set count=0)
  sp_coll_cli(count_negative 2 bench --technique reduce --set count=-4)
  sp_coll_cli(unknown_op 2 check --technique all_reduce --set op=prod)
  sp_coll_cli(unknown_type 2 check --technique broadcast --set dtype=bf8)
  sp_coll_cli(int_overflow 2 check --technique all_gather --set count=600000000,dtype=fp64)
  sp_coll_cli(root_not_a_rank 2 check --technique reduce --set root=5)
  sp_coll_cli(nt_count_zero 2 nccl-tests -b 0 -e 1K)
  sp_coll_cli(nt_bad_suffix 2 nccl-tests -b 1X)
  sp_coll_cli(nt_unknown_op 2 nccl-tests -o prod)
  sp_coll_cli(nt_unknown_type 2 nccl-tests -d bfloat8)
  sp_coll_cli(nt_unknown_collective 2 nccl-tests -c all_to_all)
  sp_coll_cli(nt_unknown_algorithm 2 nccl-tests -a butterfly)
  sp_coll_cli(nt_int_overflow 2 nccl-tests -b 4G -e 4G -d float)
  sp_coll_cli(nt_smaller_than_type 2 nccl-tests -b 2 -e 2 -d double)
  sp_coll_cli(nt_end_below_begin 2 nccl-tests -b 1M -e 1K)
  sp_coll_cli(nt_ok 0 nccl-tests -b 8 -e 4K -f 8 -a ring -n 2 -w 1 -c 1)
  if(SP_ENABLE_MPI)
    # At 3 ranks the power-of-two algorithms must refuse, not fall back silently.
    # (cli_test.sh runs mpiexec itself, so all ranks' stderr is checked at once.)
    add_test(NAME cli_coll_nt_not_power_of_two
             COMMAND bash ${_cli} ${MPIEXEC_EXECUTABLE} 2 ${MPIEXEC_NUMPROC_FLAG} 3 $<TARGET_FILE:scaleproof>
                     nccl-tests -a rabenseifner -b 8 -e 8)
    set_tests_properties(cli_coll_nt_not_power_of_two PROPERTIES LABELS "cli;collectives;mpi"
      ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false" PROCESSORS 2)
  endif()
endif()
