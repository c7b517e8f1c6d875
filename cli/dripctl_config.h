// dripctl's own settings: where the collector is, how to prove who we are to it, and how
// long to wait for it. Read from --config (YAML), then the DRIP_COLLECTOR environment
// variable, then flags, each overriding the one before:
//
//   collector: collector.example.com:7070
//   timeout: 10s
//   tls:
//     ca_file: /etc/drip/ca.crt       # verifies the collector
//     cert_file: ~/.drip/alice.crt    # optional client certificate (a principal's)
//     key_file: ~/.drip/alice.key
//   token_file: ~/.drip/token         # or a bearer token instead of a certificate
//
// TLS unless `tls.plaintext: true` (or --plaintext) says otherwise, like every Drip
// connection (common/rpc/tls_settings.h).
#pragma once

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "common/rpc/tls_settings.h"

namespace drip::cli {

struct DripctlConfig {
  std::string collector = "127.0.0.1:7070";
  std::chrono::milliseconds timeout = std::chrono::seconds(10);
  TlsSettings tls;
  std::string token_file;  // a bearer token for the query API's access policy
};

// Empty `path`: defaults (plus DRIP_COLLECTOR).
absl::StatusOr<DripctlConfig> LoadDripctlConfig(const std::string& path);

// After flags: whether the settings can reach a collector. The message names the flag
// and the config key to set.
absl::Status ValidateDripctlConfig(const DripctlConfig& config);

}  // namespace drip::cli
