# The include rule the per-concern include paths cannot see (docs/ARCHITECTURE.md): no #include
# climbs out of its folder with "../" (the way around a private include path), and a public header
# under include/ includes only public headers ("llmprof/...") or system and third-party ones.
#   cmake -DLLMPROF_SOURCE_DIR=<repo> -P cmake/check_includes.cmake
set(root ${LLMPROF_SOURCE_DIR})
file(GLOB_RECURSE sources ${root}/include/*.h ${root}/src/*.h ${root}/src/*.cpp ${root}/tests/*.h
     ${root}/tests/*.cpp ${root}/scripts/*.cpp)
set(bad "")
foreach(f IN LISTS sources)
  file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][^\">]*\\.\\./")
  foreach(line IN LISTS lines)
    string(APPEND bad "  ${f}: ${line}  (climbs out with ../)\n")
  endforeach()
  string(FIND "${f}" "${root}/include/" at)
  if(at EQUAL 0)
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "#[ \t]*include[ \t]*\"llmprof/")
        string(APPEND bad "  ${f}: ${line}  (a public header includes a non-public one)\n")
      endif()
    endforeach()
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "include rule broken:\n${bad}")
endif()
list(LENGTH sources n)
message(STATUS "include rule: ${n} files checked")
