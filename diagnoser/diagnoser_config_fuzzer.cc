// Fuzzes the diagnoser's config (diagnoser/diagnoser_config.h) as `dripctl diagnose
// --config` reads it: keys at the top level, then no unknown keys (cli/diagnose_command.cc,
// LoadDiagnoserConfig). The collector reads the same keys under `diagnoser:`, which
// collector_config_fuzzer covers. A config that loads must pass ValidateDiagnoserConfig.
#include <cstddef>
#include <cstdint>

#include "common/base/config_reader.h"
#include "common/base/status_macros.h"
#include "diagnoser/diagnoser_config.h"
#include "tests/fuzz/config_outcome.h"

namespace {

absl::Status Load(std::string_view yaml, drip::diagnoser::DiagnoserConfig* config) {
  ASSIGN_OR_RETURN(drip::ConfigReader reader,
                   drip::ConfigReader::FromString(yaml, drip::fuzz::kConfigSource));
  RETURN_IF_ERROR(drip::diagnoser::ReadDiagnoserConfig(reader, "", config));
  return reader.CheckNoUnknownKeys();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  drip::diagnoser::DiagnoserConfig config;
  const absl::Status status = Load(drip::fuzz::AsText(data, size), &config);
  drip::fuzz::CheckConfigOutcome(status, drip::fuzz::kConfigSource);
  if (status.ok()) {
    const absl::Status valid = drip::diagnoser::ValidateDiagnoserConfig(config);
    FUZZ_CHECK(valid.ok(), "loaded but invalid: %s", valid.ToString().c_str());
  }
  return 0;
}
