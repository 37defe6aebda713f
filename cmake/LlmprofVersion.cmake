# Writes generated/llmprof/version.h with the project version and the git sha of the source tree.
find_package(Git QUIET)
set(LLMPROF_GIT_SHA "unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
                  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
                  OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                  RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND sha)
    set(LLMPROF_GIT_SHA ${sha})
  endif()
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.h.in
               ${CMAKE_CURRENT_BINARY_DIR}/generated/llmprof/version.h @ONLY)
