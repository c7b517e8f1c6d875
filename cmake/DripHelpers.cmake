# drip_test(NAME SOURCES... LIBS... [LABELS...] [RESOURCE_LOCK names...]): a GoogleTest
# binary whose tests CTest lists one by one. Tests that share a RESOURCE_LOCK never run at
# the same time, whatever ctest -j says (docs/testing.md).
if(DRIP_SANITIZE)
  set(DRIP_TEST_SOURCE_OPTIONS -O0)
elseif(CMAKE_BUILD_TYPE MATCHES "^(RelWithDebInfo|Release)$")
  set(DRIP_TEST_SOURCE_OPTIONS -Og)
endif()

function(drip_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS;RESOURCE_LOCK" ${ARGN})
  if(NOT DRIP_BUILD_TESTS)
    return()
  endif()
  if(NOT DRIP_BUILD_UNIT_TESTS AND NOT "integration" IN_LIST ARG_LABELS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  # A test's own sources are glue around libraries built with the build's flags: optimising
  # their GoogleTest and gRPC templates costs half of their compile time and buys nothing
  # (docs/testing.md). The code under test keeps its optimisation.
  target_compile_options(${name} PRIVATE ${DRIP_TEST_SOURCE_OPTIONS})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${ARG_LABELS}")
  if(ARG_RESOURCE_LOCK)
    # gtest_discover_tests writes a list-valued property unquoted, so that a second lock
    # name would be read as a property name: the locks are set by a file CTest includes
    # after the discovered tests (which it lists in ${name}_TESTS).
    set(locks_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_resource_locks.cmake")
    file(WRITE "${locks_file}"
         "set_tests_properties(\${${name}_TESTS} PROPERTIES RESOURCE_LOCK \"${ARG_RESOURCE_LOCK}\")\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${locks_file}")
  endif()
endfunction()
