# drip_test(NAME SOURCES... LIBS... [LABELS...] [RESOURCE_LOCK name]): a GoogleTest binary
# whose tests CTest lists one by one. Tests that share a RESOURCE_LOCK never run at the
# same time, whatever ctest -j says (docs/testing.md).
function(drip_test name)
  cmake_parse_arguments(ARG "" "RESOURCE_LOCK" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT DRIP_BUILD_TESTS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  set(properties LABELS "${ARG_LABELS}")
  if(ARG_RESOURCE_LOCK)
    list(APPEND properties RESOURCE_LOCK ${ARG_RESOURCE_LOCK})
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ${properties})
endfunction()
