# Fuzz targets (docs/fuzzing.md). Every parser of untrusted bytes has a *_fuzzer.cc beside
# it that defines LLVMFuzzerTestOneInput, and a seed corpus in tests/fuzz/corpus/NAME/.
#
# drip_fuzzer(NAME SUITE GTestSuiteName SOURCES... LIBS...):
#   - in the clang sanitizer build (DRIP_SANITIZE with clang, DRIP_LIBFUZZER): the libFuzzer
#     binary NAME, built with -fsanitize=fuzzer,address,undefined and part of the
#     drip_fuzzers target, which scripts/fuzz.sh builds and runs;
#   - with DRIP_BUILD_TESTS (any compiler, the sanitizer build included): the GoogleTest
#     binary NAME_replay_test, which runs every file of the seed corpus and of
#     tests/fuzz/regressions/NAME/ through the same LLVMFuzzerTestOneInput, so each CI build
#     exercises the corpora and every crasher ever found stays fixed.

set(DRIP_FUZZ_DIR ${PROJECT_SOURCE_DIR}/tests/fuzz)
if(DRIP_LIBFUZZER)
  add_custom_target(drip_fuzzers)
endif()

function(drip_fuzzer name)
  cmake_parse_arguments(ARG "" "SUITE" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_SUITE)
    message(FATAL_ERROR "drip_fuzzer(${name}): SUITE (the replay test's suite name) is required")
  endif()
  if(DRIP_LIBFUZZER)
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE ${ARG_LIBS})
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    add_dependencies(drip_fuzzers ${name})
  endif()
  if(DRIP_BUILD_TESTS)
    drip_test(${name}_replay_test
      SOURCES ${ARG_SOURCES} ${DRIP_FUZZ_DIR}/fuzz_replay_test.cc
      LIBS ${ARG_LIBS})
  endif()
  if(TARGET ${name}_replay_test)
    target_compile_definitions(${name}_replay_test PRIVATE
      DRIP_FUZZER_SUITE=${ARG_SUITE}
      DRIP_FUZZ_CORPUS_DIR="${DRIP_FUZZ_DIR}/corpus/${name}"
      DRIP_FUZZ_REGRESSIONS_DIR="${DRIP_FUZZ_DIR}/regressions/${name}")
  endif()
endfunction()
