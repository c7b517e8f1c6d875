// A daemon started with --ready-file writes there, once it serves, a one-line JSON
// object with the addresses it actually bound ({"grpc": "127.0.0.1:41234", ...}).
// Tests and the demo bind port 0 and read the real port from it. Written atomically
// (temp file + rename) so a reader never sees half a file.
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace drip {

absl::Status WriteReadyFile(const std::string& path,
                            const std::map<std::string, std::string>& fields);
absl::StatusOr<std::map<std::string, std::string>> ReadReadyFile(const std::string& path);

}  // namespace drip
