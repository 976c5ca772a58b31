# cmake -DSRC=<source dir> -DGIT=<git> -DFALLBACK=<commit> -DOUT=<header> -P write_build_commit.cmake
# Writes OUT, "#define SP_BUILD_COMMIT ..." with the commit the binary is
# built from ("-dirty" when tracked files differ from it; FALLBACK for a
# source tree without .git, e.g. ci/bundle.sh's copy). Rewritten only when
# the text changes, so a build at an unchanged commit recompiles nothing.
set(commit "${FALLBACK}")
if(GIT AND EXISTS "${SRC}/.git")
  execute_process(COMMAND "${GIT}" rev-parse HEAD WORKING_DIRECTORY "${SRC}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
    set(commit "${head}")
    execute_process(COMMAND "${GIT}" status --porcelain --untracked-files=no WORKING_DIRECTORY "${SRC}"
                    OUTPUT_VARIABLE changes ERROR_QUIET)
    if(NOT changes STREQUAL "")
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
set(text "#define SP_BUILD_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
