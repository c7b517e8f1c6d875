// Fuzzes drip-collector's config (collector/collector_config.h) from YAML text: every
// section the collector reads, the detector's, diagnoser's, snapshot, report and
// mitigation keys included, since they come through CollectorConfig::FromString. A
// config that loads must also pass Validate(), which the collector runs again after its
// command-line overrides.
#include <cstddef>
#include <cstdint>

#include "collector/collector_config.h"
#include "tests/fuzz/config_outcome.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using drip::collector::CollectorConfig;
  absl::StatusOr<CollectorConfig> config =
      CollectorConfig::FromString(drip::fuzz::AsText(data, size), drip::fuzz::kConfigSource);
  drip::fuzz::CheckConfigOutcome(config.status(), drip::fuzz::kConfigSource);
  if (config.ok()) {
    const absl::Status valid = config->Validate();
    FUZZ_CHECK(valid.ok(), "loaded but invalid: %s", valid.ToString().c_str());
  }
  return 0;
}
