// Fuzzes the detector's config (analyzer/detector_config.h) as `dripctl analyze --config`
// reads it: keys at the top level, then no unknown keys (cli/analyze_command.cc,
// LoadDetectorConfig). The collector reads the same keys under `detector:`, which
// collector_config_fuzzer covers. A config that loads must pass ValidateDetectorConfig.
#include <cstddef>
#include <cstdint>

#include "analyzer/detector_config.h"
#include "common/base/config_reader.h"
#include "common/base/status_macros.h"
#include "tests/fuzz/config_outcome.h"

namespace {

absl::Status Load(std::string_view yaml, drip::analyzer::DetectorConfig* config) {
  ASSIGN_OR_RETURN(drip::ConfigReader reader,
                   drip::ConfigReader::FromString(yaml, drip::fuzz::kConfigSource));
  RETURN_IF_ERROR(drip::analyzer::ReadDetectorConfig(reader, "", config));
  return reader.CheckNoUnknownKeys();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  drip::analyzer::DetectorConfig config;
  const absl::Status status = Load(drip::fuzz::AsText(data, size), &config);
  drip::fuzz::CheckConfigOutcome(status, drip::fuzz::kConfigSource);
  if (status.ok()) {
    const absl::Status valid = drip::analyzer::ValidateDetectorConfig(config);
    FUZZ_CHECK(valid.ok(), "loaded but invalid: %s", valid.ToString().c_str());
  }
  return 0;
}
