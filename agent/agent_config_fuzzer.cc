// Fuzzes drip-agent's config (agent/agent_config.h) from YAML text. A config that loads
// must also pass Validate(), which the agent runs again after its command-line overrides.
// Links only drip_agent_config, not the BPF parts of the agent.
#include <cstddef>
#include <cstdint>

#include "agent/agent_config.h"
#include "tests/fuzz/config_outcome.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using drip::agent::AgentConfig;
  absl::StatusOr<AgentConfig> config =
      AgentConfig::FromString(drip::fuzz::AsText(data, size), drip::fuzz::kConfigSource);
  drip::fuzz::CheckConfigOutcome(config.status(), drip::fuzz::kConfigSource);
  if (config.ok()) {
    const absl::Status valid = config->Validate();
    FUZZ_CHECK(valid.ok(), "loaded but invalid: %s", valid.ToString().c_str());
  }
  return 0;
}
