# Collectives: the nccl-tests command uses the harness's size parser
# (parse_bytes); its unit tests and CLI tests live here.
target_link_libraries(${SP_FAMILY_TARGET} PUBLIC sp_harness)

if(SP_BUILD_TESTS)
  sp_unit_tests(sp_coll_tests ${CMAKE_CURRENT_LIST_DIR}/tests/test_model.cpp ${CMAKE_CURRENT_LIST_DIR}/tests/test_fp16.cpp
                ${CMAKE_CURRENT_LIST_DIR}/tests/test_records.cpp)

  if(SP_ENABLE_MPI)
    # Each record of the algorithms table against its own run at 2, 3 and 4
    # ranks (one call per record; 3 ranks makes the power-of-two rule refuse).
    sp_mpi_gtests(coll_records sp_coll_tests "AlgorithmRecords.*" 300 conformance 2 3 4)
  endif()

  # Bad input to the collectives: one line on stderr, exit 2, nothing written.
  sp_cli_test(coll_count_zero 2 run --technique all_reduce --set count=0)
  sp_cli_test(coll_count_negative 2 bench --technique reduce --set count=-4)
  sp_cli_test(coll_unknown_op 2 check --technique all_reduce --set op=prod)
  sp_cli_test(coll_unknown_type 2 check --technique broadcast --set dtype=bf8)
  sp_cli_test(coll_int_overflow 2 check --technique all_gather --set count=600000000,dtype=fp64)
  sp_cli_test(coll_root_not_a_rank 2 check --technique reduce --set root=5)
  sp_cli_test(coll_nt_count_zero 2 nccl-tests -b 0 -e 1K)
  sp_cli_test(coll_nt_bad_suffix 2 nccl-tests -b 1X)
  sp_cli_test(coll_nt_unknown_op 2 nccl-tests -o prod)
  sp_cli_test(coll_nt_unknown_type 2 nccl-tests -d bfloat8)
  sp_cli_test(coll_nt_unknown_collective 2 nccl-tests -c all_to_all)
  sp_cli_test(coll_nt_unknown_algorithm 2 nccl-tests -a butterfly)
  sp_cli_test(coll_nt_int_overflow 2 nccl-tests -b 4G -e 4G -d float)
  sp_cli_test(coll_nt_smaller_than_type 2 nccl-tests -b 2 -e 2 -d double)
  sp_cli_test(coll_nt_end_below_begin 2 nccl-tests -b 1M -e 1K)
  sp_cli_test(coll_nt_negative_settle 2 nccl-tests --settle -1)
  sp_cli_test(coll_nt_ok 0 nccl-tests -b 8 -e 4K -f 8 -a ring -n 2 -w 1 -c 1)
  # At 3 ranks the power-of-two algorithms must refuse, not fall back silently
  # (all ranks' stderr is checked at once).
  sp_cli_test_mpi(coll_nt_not_power_of_two 3 2 nccl-tests -a rabenseifner -b 8 -e 8)
  # Two ranks end to end: exchange and ping-pong calibration, model, checks
  # (exit 1 on any wrong element).
  sp_cli_test_mpi(coll_nt_two_ranks 2 0 nccl-tests -b 4K -e 256K -f 8 -n 2 -w 1)
  # The same refusal through the registry: a variant asked for by name that
  # this rank count cannot run is named with the reason, not "nothing selected".
  sp_cli_test_mpi(coll_bench_not_power_of_two 3 2 bench --technique all_reduce --variant rabenseifner --size small)
  sp_cli_test_mpi(coll_family_not_power_of_two 3 2 bench --family collectives --variant recursive_doubling --size small)
  foreach(t coll_nt_not_power_of_two coll_bench_not_power_of_two coll_family_not_power_of_two)
    if(TEST cli_${t})
      set_property(TEST cli_${t} APPEND PROPERTY ENVIRONMENT "SP_EXPECT_ERR=needs a power-of-two rank count \\(got 3\\)")
    endif()
  endforeach()
endif()
