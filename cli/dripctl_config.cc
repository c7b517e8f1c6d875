#include "cli/dripctl_config.h"

#include <cstdlib>

#include "common/config_reader.h"
#include "common/status_macros.h"

namespace drip::cli {

absl::StatusOr<DripctlConfig> LoadDripctlConfig(const std::string& path) {
  DripctlConfig config;
  if (!path.empty()) {
    ASSIGN_OR_RETURN(ConfigReader reader, ConfigReader::FromFile(path));
    RETURN_IF_ERROR(reader.ReadString("collector", &config.collector));
    RETURN_IF_ERROR(reader.ReadDuration("timeout", &config.timeout, std::chrono::milliseconds(1)));
    RETURN_IF_ERROR(reader.CheckNoUnknownKeys());
  }
  if (const char* env = std::getenv("DRIP_COLLECTOR"); env != nullptr && *env != '\0') {
    config.collector = env;
  }
  return config;
}

}  // namespace drip::cli
