# Model parallelism: the `scaleproof pipeline` and `scaleproof model parallel`
# subcommands use CLI11 and nlohmann-json; unit tests are their own executable.
target_link_libraries(${SP_FAMILY_TARGET} PUBLIC CLI11::CLI11 nlohmann_json::nlohmann_json)

if(SP_BUILD_TESTS)
  file(GLOB _mp_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/tests/*.cpp)
  sp_unit_tests(sp_modelparallel_tests ${_mp_tests})
endif()

# The timeline chart script run by `scaleproof pipeline` (system Python with matplotlib).
target_compile_definitions(${SP_FAMILY_TARGET} PRIVATE
  SP_MP_PLOT_SCRIPT="${CMAKE_CURRENT_LIST_DIR}/plots/timeline.py")

# Bad input at the command line: one line on stderr, exit 2, nothing written.
if(SP_BUILD_TESTS)
  sp_cli_test(mp_interleaved_m_not_multiple_of_p 2 pipeline --schedule interleaved -p 2 -m 3 -v 2 --out results)
  sp_cli_test(mp_layers_fewer_than_stages_times_v 2 pipeline --schedule interleaved -p 1 -m 4 -v 4 -L 3 --out results)
  sp_cli_test(mp_p_larger_than_ranks 2 pipeline --schedule 1f1b -p 2 -m 4 --out results)
  sp_cli_test(mp_v_without_interleaving 2 pipeline --schedule gpipe -p 1 -m 4 -v 2 --out results)
  sp_cli_test(mp_unknown_schedule 2 pipeline --schedule zb -p 1 --out results)
  sp_cli_test(mp_technique_layers_fewer_than_chunks 2 check --technique pipeline_interleaved --set L=1)
  sp_cli_test(mp_heads_not_divisible_by_t 2 model parallel --tp 5)
  sp_cli_test(mp_hidden_not_divisible_by_heads 2 check --technique tp_attention --set h=25)
  if(SP_ENABLE_MPI)
    # At 2 ranks t = 2: 3 heads and ffn 25 cannot be split.
    sp_cli_test_mpi(mp_np2_heads_not_divisible_by_t 2 2 check --technique tp_attention --set heads=3)
    sp_cli_test_mpi(mp_np2_ffn_not_divisible_by_t 2 2 check --technique tp_mlp --set ffn=25)
    sp_cli_test_mpi(mp_np2_hidden_not_divisible_by_t 2 2 check --technique tp_transformer_layer --set h=25,heads=25)
  endif()
endif()
