// Sampler: what the agent reads each interval — one memory sample per entity (process,
// systemd unit, slab cache) that the host has right now. Process samplers: the BPF task
// iterator (BpfSampler) and the /proc reader (ProcSampler); HostSampler adds units and
// slab caches to whichever the factory (agent/sampler_factory.h) picked at start. The
// agent never mixes the two process samplers.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "drip/v1/sample.pb.h"

namespace drip::agent {

class CgroupLimitReader;

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

  // Why this is not the sampler that was asked for ("" when it is): reported with the
  // agent's status so that a fallback is never silent. Constant, thread-safe.
  virtual std::string fallback_reason() const { return ""; }

  // Entities left out by a per-pass cap since the sampler started. Call from the thread
  // that runs SampleOnce.
  virtual uint64_t skipped_entities() const { return 0; }

  // Process lifecycle events the kernel side dropped (BPF ring buffer full) since start.
  virtual uint64_t lost_events() const { return 0; }

  // Where to read each process's memory limit and OOM kills (MemoryLimit); null: none is
  // read. HostSampler owns the reader and begins its passes. Call before the first pass.
  virtual void set_limit_reader(CgroupLimitReader* limits) {}
};

}  // namespace drip::agent
