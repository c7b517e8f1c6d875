// Sampler: what the agent reads each interval — one memory sample per entity (process,
// and later cgroup and slab cache) that the host has right now. Implementations: the
// /proc reader (ProcSampler) and, later, the BPF task iterator; the agent picks one
// at start (agent/sampler_factory.h) and never mixes them.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "drip/v1/sample.pb.h"

namespace drip::agent {

class Sampler {
 public:
  virtual ~Sampler() = default;

  // One pass over every entity, each sample with component, instance, timestamp_ms
  // (one timestamp for the whole pass) and its memory figures; host is left empty (the
  // stream's host). Entities that disappear during the pass are left out; an entity
  // that cannot be read is left out and counted by the implementation. Fails only when
  // the pass as a whole cannot be done (e.g. /proc is not there). Not thread-safe:
  // one caller at a time.
  virtual absl::StatusOr<std::vector<drip::v1::Sample>> SampleOnce() = 0;

  // "proc" or "bpf": reported to the collector (AgentStatus.sampler) and to users.
  // Constant for the sampler's lifetime and thread-safe: the stream threads read it
  // while a pass runs.
  virtual std::string name() const = 0;
};

}  // namespace drip::agent
