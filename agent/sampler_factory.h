// Builds the sampler the agent runs, from AgentConfig: a HostSampler around the process
// sampler that `sampler` asks for — "bpf" (the task iterator; start fails without it),
// "proc", or "auto": BPF when the kernel accepts the programs, else /proc with the
// reason logged once and reported (metric, status to the collector, `drip-agent sample`),
// so that a fallback is never silent (docs/design.md). Units and slab caches are added as
// the config says and the host allows.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "agent/agent_config.h"
#include "agent/host_sampler.h"
#include "common/base/clock.h"

namespace drip::agent {

// `clock` must outlive the sampler.
absl::StatusOr<std::unique_ptr<HostSampler>> CreateSampler(const AgentConfig& config,
                                                           const Clock* clock);

}  // namespace drip::agent
