#include "cli/dripctl_config.h"

#include <cstdlib>

#include "common/base/config_reader.h"
#include "common/base/status_macros.h"

namespace drip::cli {

absl::StatusOr<DripctlConfig> LoadDripctlConfig(const std::string& path) {
  DripctlConfig config;
  if (!path.empty()) {
    ASSIGN_OR_RETURN(ConfigReader reader, ConfigReader::FromFile(path));
    RETURN_IF_ERROR(reader.ReadString("collector", &config.collector));
    RETURN_IF_ERROR(reader.ReadDuration("timeout", &config.timeout, std::chrono::milliseconds(1)));
    RETURN_IF_ERROR(ReadTlsSettings(reader, "tls.", &config.tls));
    RETURN_IF_ERROR(reader.ReadString("token_file", &config.token_file));
    RETURN_IF_ERROR(reader.CheckNoUnknownKeys());
  }
  if (const char* env = std::getenv("DRIP_COLLECTOR"); env != nullptr && *env != '\0') {
    config.collector = env;
  }
  return config;
}

absl::Status ValidateDripctlConfig(const DripctlConfig& config) {
  if (config.tls.plaintext) {
    if (!config.tls.ca_file.empty() || !config.tls.cert_file.empty() ||
        !config.tls.key_file.empty()) {
      return absl::InvalidArgumentError(
          "--plaintext (tls.plaintext) and certificate files (--ca, --cert, --key) exclude each "
          "other");
    }
    return absl::OkStatus();
  }
  if (config.tls.ca_file.empty()) {
    return absl::InvalidArgumentError(
        "no TLS settings for the collector: pass --ca FILE (the CA that signed the collector's "
        "certificate, tls.ca_file in --config), or --plaintext for a collector that serves "
        "without TLS");
  }
  if (config.tls.cert_file.empty() != config.tls.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--cert and --key (tls.cert_file, tls.key_file) go together: give both or neither");
  }
  return absl::OkStatus();
}

}  // namespace drip::cli
