// FUZZ_CHECK: an oracle inside a fuzz target. A failed check prints what was expected
// and aborts, which libFuzzer reports as a crash (and saves the input) and which fails the
// replay test in GoogleTest builds; plain assert() would vanish in release builds.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, ...)                                                            \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: ", __FILE__, __LINE__, #condition); \
      std::fprintf(stderr, __VA_ARGS__);                                                      \
      std::fprintf(stderr, "\n");                                                             \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)
