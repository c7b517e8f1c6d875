// DRIP_CHECK and DRIP_DCHECK: the one way to state an internal invariant whose breach must
// stop the process (docs/errors.md, "Crash"): a bug, where carrying on would corrupt data or
// answer wrongly. Bad input, I/O errors and everything else a caller can cause are values
// (absl::Status), never checks.
//
//   DRIP_CHECK(streams_.empty(), "ingest service destroyed with {} streams open", n);
//
// A failed check prints `file:line: check failed: CONDITION: MESSAGE` to stderr (where
// systemd's journal takes a daemon's last words) and aborts, so that the core dump and the
// restart policy take over. DRIP_DCHECK is the same in builds without NDEBUG (the sanitizer
// build, tests) and compiles to nothing otherwise, its arguments still type-checked: for
// checks too costly for production.
#pragma once

#include <string>

#include "fmt/format.h"

namespace drip::check_internal {

[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const std::string& message);

}  // namespace drip::check_internal

#define DRIP_CHECK(condition, ...)                                        \
  do {                                                                    \
    if (!(condition)) [[unlikely]] {                                      \
      ::drip::check_internal::CheckFailed(__FILE__, __LINE__, #condition, \
                                          ::fmt::format(__VA_ARGS__));    \
    }                                                                     \
  } while (0)

#ifdef NDEBUG
#define DRIP_DCHECK(condition, ...)                \
  do {                                             \
    if (false) DRIP_CHECK(condition, __VA_ARGS__); \
  } while (0)
#else
#define DRIP_DCHECK(condition, ...) DRIP_CHECK(condition, __VA_ARGS__)
#endif
