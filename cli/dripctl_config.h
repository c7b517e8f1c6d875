// dripctl's own settings: where the collector is and how long to wait for it. Read
// from --config (YAML), then the DRIP_COLLECTOR environment variable, then flags, each
// overriding the one before.
#pragma once

#include <chrono>
#include <string>

#include "absl/status/statusor.h"

namespace drip::cli {

struct DripctlConfig {
  std::string collector = "127.0.0.1:7070";
  std::chrono::milliseconds timeout = std::chrono::seconds(10);
};

// Empty `path`: defaults (plus DRIP_COLLECTOR).
absl::StatusOr<DripctlConfig> LoadDripctlConfig(const std::string& path);

}  // namespace drip::cli
