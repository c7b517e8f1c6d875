// ReplicaWriter: the replica's half of replication (docs/cluster.md, "Replication"). A
// host's owner hands each batch it stored to the host's replicas (MemberService.Replicate);
// here the batch is checked as a stream's batch would be, stored under the host with the
// owner's sequence (so a batch handed over twice is stored once, and a batch the replica
// missed is recorded as the host's gap), and, once durable, fed to this member's detector:
// the member that takes the host over when its owner dies judges it with the history it
// already has, not as a new series.
//
// Thread-safe: batches of one host arrive from its one owner in order.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "collector/collector_metrics.h"
#include "collector/ingest/sample_validator.h"
#include "collector/pipeline/detector_feed.h"
#include "collector/storage/series_store.h"
#include "drip/v1/agent.pb.h"
#include "drip/v1/query.pb.h"

namespace drip::collector {

struct ReplicaWrite {
  bool stored = false;          // false: this member had the batch already
  uint64_t acked_sequence = 0;  // the host's high-water mark here, after it
};

class ReplicaWriter {
 public:
  // Every pointer must outlive the writer.
  ReplicaWriter(const SampleValidator* validator, SeriesStore* store, DetectorFeed* detector,
                CollectorMetrics* metrics);

  // Stores `batch` of `host.host()`; what the host's hello said is kept the first time
  // this member sees the host (and again after a restart). INVALID_ARGUMENT for a batch a
  // stream would refuse (the validator's message); the store's error when it cannot write.
  absl::StatusOr<ReplicaWrite> Write(const drip::v1::HostInfo& host,
                                     const drip::v1::SampleBatch& batch);

  // One part of a repair of `host` from another member's copy (MemberService.RepairHost):
  // stores the samples this member lacks and returns how many. With `last`, once any part
  // of this repair stored something, the host's history is replayed into the detector, so
  // that it judges the host with the samples it just got. Errors as Write's.
  absl::StatusOr<uint64_t> Repair(const drip::v1::HostInfo& host,
                                  const drip::v1::SampleBatch& batch, bool last);

  // What this member's copy of `host` holds per window (MemberService.CountHostSamples,
  // host_sample_counts.h): the other holder compares it with its own.
  absl::StatusOr<std::map<int64_t, uint64_t>> Count(const std::string& host, int64_t since_ms,
                                                    int64_t window_ms);

 private:
  const SampleValidator* validator_;
  SeriesStore* store_;
  DetectorFeed* detector_;
  CollectorMetrics* metrics_;
  std::mutex mu_;
  // Checks `batch` and stores the host's hello the first time this process sees it.
  absl::Status Admit(const drip::v1::HostInfo& host, const drip::v1::SampleBatch& batch);

  std::set<std::string> hosts_put_;           // whose hello this process has stored
  std::map<std::string, uint64_t> repaired_;  // samples stored by each host's open repair
};

}  // namespace drip::collector
