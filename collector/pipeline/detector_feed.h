// DetectorFeed: what an agent session gives the leak pipeline's detector, and the one
// question it asks it (docs/design.md, "Following one batch, and one command"). A session feeds
// only what is durable in the store, so that a replay after a crash sees the same. LeakPipeline
// implements it; the message fuzzer drives the real one.
//
// Thread-safe: sessions call from every ingest worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "drip/v1/agent.pb.h"

namespace drip::collector {

class DetectorFeed {
 public:
  virtual ~DetectorFeed() = default;

  // The components of `batch` that `host` may not add: those it has not sent before, once
  // it has `max_components` (OnlineDetector::ComponentsOverQuota). Empty when every
  // sample may be stored.
  virtual std::set<std::string> ComponentsOverQuota(const std::string& host,
                                                    const drip::v1::SampleBatch& batch,
                                                    size_t max_components) const = 0;
  // A batch of `host` that is durable in the store.
  virtual void ObserveBatch(const std::string& host, const drip::v1::SampleBatch& batch) = 0;
  // A batch another member stored from `host`'s stream, durable here as its replica:
  // judged the same, but the owner counts the host in the fleet drift.
  virtual void ObserveReplicaBatch(const std::string& host, const drip::v1::SampleBatch& batch) = 0;
  // The host's total memory, as its hello said: what ETAs to OOM are computed from.
  virtual void SetHostMemory(const std::string& host, uint64_t bytes) = 0;
  // Judges `host` again from what the store holds (its recent history, as at start), once
  // a repair has given this member samples older than the ones it judged. Returns how
  // many samples were replayed.
  virtual absl::StatusOr<uint64_t> ReplayHost(const std::string& host) = 0;
};

}  // namespace drip::collector
