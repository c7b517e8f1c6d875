// Chooses the sampler the agent runs, from AgentConfig.sampler: "proc" is the /proc
// reader; "auto" picks the best one this host and build support — the BPF sampler
// once it exists, /proc today — and logs which one and why, so that a fallback is
// never silent (DESIGN.md).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "agent/agent_config.h"
#include "agent/sampler.h"
#include "common/clock.h"

namespace drip::agent {

// `clock` must outlive the sampler.
absl::StatusOr<std::unique_ptr<Sampler>> CreateSampler(const AgentConfig& config,
                                                       const Clock* clock);

}  // namespace drip::agent
