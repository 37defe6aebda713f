# Deps.IncludeOutsideDepsFailsToCompile: builds a probe target that includes HEADER from outside
# its concern's DEPS and passes only when the compile fails because HEADER is not found. HEADER
# must exist under include/, so that "not found" means "not on this concern's path".
#   cmake -DBUILD_DIR=<build> -DTARGET=<probe> -DHEADER=llmprof/<c>/<h>.h -DSOURCE_DIR=<repo>
#         -P tests/deps/expect_missing_header.cmake
if(NOT EXISTS ${SOURCE_DIR}/include/${HEADER})
  message(FATAL_ERROR "include/${HEADER} does not exist: the probe would fail for that reason, "
                      "not for the include path (pick a header that exists)")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, yet it includes ${HEADER} from outside its DEPS:\n${out}")
endif()
string(REPLACE "." "\\." header_re "${HEADER}")
# gcc: "fatal error: llmprof/x/y.h: No such file or directory"; clang: "'llmprof/x/y.h' file not found"
if(NOT out MATCHES "${header_re}: No such file or directory" AND
   NOT out MATCHES "'${header_re}' file not found")
  message(FATAL_ERROR "${TARGET} failed to build, but not for want of ${HEADER}:\n${out}")
endif()
message(STATUS "${TARGET}: ${HEADER} is not on its include path, as expected")
