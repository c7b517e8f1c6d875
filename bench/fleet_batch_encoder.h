// FleetBatchEncoder: the sample batches of one simulated host in the fleet load
// benchmark (fleet_load_bench.cc), written straight to protobuf wire format.
//
// A host looks like a busy production machine as the agent reports it: `samples`
// entities per pass, of which about 85 % processes (components such as
// "svc:postgresql.service" with many workers, "pid@start" instances), 10 % systemd units
// ("cg@id" instances, cgroup figures) and 5 % kernel slab caches. Memory figures wobble
// by a few percent from pass to pass around a per-entity level, so every batch differs
// and the collector's store and detector do their usual work.
//
// Why not the generated classes: the load generator shares two cores with the
// collector, and 1,000 hosts at one batch a second are 300,000 samples a second to
// encode. The wire bytes of what never changes (each entity's component and instance
// fields) are encoded once per host; a batch then costs a few varints and a memcpy per
// sample. Build() makes the same batch with the generated classes, and the encoder's
// output must equal Build()'s serialisation byte for byte (fleet_batch_encoder_test.cc,
// and the benchmark checks it again at start).
//
// Immutable after construction: Encode and Build are safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "drip/v1/agent.pb.h"

namespace drip::bench {

class FleetBatchEncoder {
 public:
  // Host "bench-host-NNNN" (zero-padded to 4 digits) with `samples` entities per batch
  // (at least 1).
  FleetBatchEncoder(int host_index, int samples);

  const std::string& host() const { return host_; }
  int samples() const { return static_cast<int>(entities_.size()); }

  // Replaces *out with the serialised AgentMessage{batch{sequence, samples}}, every
  // sample stamped `timestamp_ms`. Figures depend only on (host, entity, sequence).
  void Encode(uint64_t sequence, int64_t timestamp_ms, std::string* out) const;

  // The same message built with the generated classes.
  drip::v1::AgentMessage Build(uint64_t sequence, int64_t timestamp_ms) const;

  // The Hello this host's agent sends.
  drip::v1::AgentMessage Hello() const;

 private:
  enum class Kind : uint8_t { kProcess, kUnit, kSlab };
  struct Entity {
    uint32_t static_offset;  // into static_bytes_: the encoded component and instance fields
    uint16_t static_size;
    Kind kind;
    uint64_t level;        // bytes (processes, units) or objects (slabs) around which it wobbles
    uint32_t object_size;  // slabs
  };
  // The memory figures of `entity` in batch `sequence`, in field order of its message.
  struct Figures {
    uint64_t values[7];
    int count;
  };
  Figures FiguresOf(const Entity& entity, uint32_t index, uint64_t sequence) const;

  void Add(Kind kind, const std::string& component, const std::string& instance, uint64_t level,
           uint32_t object_size);

  std::string host_;
  uint64_t seed_;
  std::string static_bytes_;
  std::vector<Entity> entities_;
};

}  // namespace drip::bench
