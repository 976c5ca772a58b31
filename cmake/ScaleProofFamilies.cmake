# Technique families are discovered, not listed: every folder suites/<family>/
# becomes an OBJECT library from suites/<family>, kernels/<family> and
# reference/<family> sources. Its techniques register themselves, so adding
# a technique or a family never edits the harness or this file.
# A family needing extra libraries adds suites/<family>/family.cmake, which
# sees the target name in SP_FAMILY_TARGET and the family in SP_FAMILY, and
# may use the test helpers of cmake/ScaleProofTesting.cmake.
file(GLOB _sp_families LIST_DIRECTORIES true CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/suites/*)
set(SP_FAMILY_TARGETS "")
foreach(_dir ${_sp_families})
  if(NOT IS_DIRECTORY ${_dir})
    continue()
  endif()
  get_filename_component(_fam ${_dir} NAME)
  file(GLOB _srcs CONFIGURE_DEPENDS
       ${CMAKE_CURRENT_SOURCE_DIR}/suites/${_fam}/*.cpp
       ${CMAKE_CURRENT_SOURCE_DIR}/kernels/${_fam}/*.cpp
       ${CMAKE_CURRENT_SOURCE_DIR}/reference/${_fam}/*.cpp)
  if(NOT _srcs)
    continue()
  endif()
  set(SP_FAMILY ${_fam})
  set(SP_FAMILY_TARGET sp_family_${_fam})
  add_library(${SP_FAMILY_TARGET} OBJECT ${_srcs})
  target_link_libraries(${SP_FAMILY_TARGET} PUBLIC sp_core)
  if(EXISTS ${_dir}/family.cmake)
    include(${_dir}/family.cmake)
  endif()
  list(APPEND SP_FAMILY_TARGETS ${SP_FAMILY_TARGET})
endforeach()
unset(SP_FAMILY)

# The layer library (kernels/nn) is header-only and belongs to every training
# family and to none; its unit tests compare each layer with reference/nn.
if(SP_BUILD_TESTS)
  set(SP_FAMILY nn)
  set(SP_FAMILY_TARGET "")
  file(GLOB _sp_nn_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/suites/nn/tests/*.cpp)
  sp_unit_tests(sp_nn_tests ${_sp_nn_tests})
  unset(SP_FAMILY)
  unset(SP_FAMILY_TARGET)
endif()
