#include "agent/sampler_factory.h"

#include "agent/proc_sampler.h"
#include "common/logging.h"
#include "fmt/format.h"

namespace drip::agent {

absl::StatusOr<std::unique_ptr<Sampler>> CreateSampler(const AgentConfig& config,
                                                       const Clock* clock) {
  if (config.sampler == "proc") {
    Logger("agent")->info("sampler: proc (reading {}, as configured)", config.proc_root);
    return std::make_unique<ProcSampler>(config.proc_root, clock);
  }
  if (config.sampler == "auto") {
    Logger("agent")->info(
        "sampler: proc (auto: this agent version has no BPF sampler yet; reading {})",
        config.proc_root);
    return std::make_unique<ProcSampler>(config.proc_root, clock);
  }
  // AgentConfig refuses other values; reaching here means a caller built one by hand.
  return absl::InvalidArgumentError(
      fmt::format("sampler: '{}' is not one of auto, proc", config.sampler));
}

}  // namespace drip::agent
