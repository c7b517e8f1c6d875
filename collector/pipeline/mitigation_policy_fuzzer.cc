// Fuzzes the mitigation policy (collector/pipeline/mitigation_policy.h): the collector's
// `mitigation:` section alone — defaults, the per-component list of mappings, fleet-wide
// limits — so that the fuzzer spends its time on the list handling rather than on the
// rest of the collector's config (collector_config_fuzzer reads it in context). Every
// component named in a policy that loads must find its own policy.
#include <cstddef>
#include <cstdint>

#include "collector/pipeline/mitigation_policy.h"
#include "common/base/config_reader.h"
#include "common/base/status_macros.h"
#include "tests/fuzz/config_outcome.h"

namespace {

absl::Status Load(std::string_view yaml, drip::collector::MitigationConfig* config) {
  ASSIGN_OR_RETURN(drip::ConfigReader reader,
                   drip::ConfigReader::FromString(yaml, drip::fuzz::kConfigSource));
  RETURN_IF_ERROR(drip::collector::ReadMitigationConfig(reader, config));
  return reader.CheckNoUnknownKeys();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  drip::collector::MitigationConfig config;
  const absl::Status status = Load(drip::fuzz::AsText(data, size), &config);
  drip::fuzz::CheckConfigOutcome(status, drip::fuzz::kConfigSource);
  if (status.ok()) {
    for (const auto& [component, policy] : config.components) {
      FUZZ_CHECK(&config.For(component) == &policy, "component %s gets another policy",
                 component.c_str());
    }
  }
  return 0;
}
