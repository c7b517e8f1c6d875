// CheckConfigOutcome: what every YAML config fuzzer checks of a load, whichever config it
// is. Loading either succeeds or fails with INVALID_ARGUMENT whose message opens with
// "SOURCE:", because an operator must be told which file to fix — "SOURCE:LINE: KEY:" for
// a single key (common/base/config_reader.h), "SOURCE: what" for the detector's and
// diagnoser's checks across keys. Any other code, an unnamed source, or an exception or
// signal escaping the loader is a bug. A new config's fuzzer is this file plus three lines: see
// collector/collector_config_fuzzer.cc.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "tests/fuzz/fuzz_check.h"

namespace drip::fuzz {

// The name fuzzers give their text where a loader takes a source name.
inline constexpr char kConfigSource[] = "<fuzz>";

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

inline void CheckConfigOutcome(const absl::Status& status, std::string_view source) {
  if (status.ok()) return;
  FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument, "%s", status.ToString().c_str());
  const std::string message(status.message());
  const bool named = message.size() > source.size() + 1 && message.starts_with(source) &&
                     message[source.size()] == ':';
  FUZZ_CHECK(named, "the error does not name its source: %s", status.ToString().c_str());
}

}  // namespace drip::fuzz
