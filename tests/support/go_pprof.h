// Runs Debian's `go tool pprof` (package golang-go) the way an engineer reads a heap
// profile Drip exported, for the tests that check what such a reader sees.
#pragma once

#include <cstdint>
#include <string>

namespace drip::testing {

struct GoPprofTop {
  int exit_status = -1;          // pclose's; -1 when it could not be started
  std::string text;              // stdout and stderr
  std::string first_row;         // the first function row after the header
  int64_t first_row_bytes = -1;  // its flat in-use bytes
};

// `go tool pprof -top -unit=B -sample_index=inuse_space ARGS`.
GoPprofTop RunGoPprofTop(const std::string& args);

}  // namespace drip::testing
