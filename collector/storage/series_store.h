// SeriesStore: the collector's durable home for samples and per-host state.
//
// A series is one (host, component, instance). Samples are kept per series in time
// order and dropped by age (retention). Each host's batches carry a sequence number;
// the store keeps the host's high-water mark atomically with the samples, which is
// what makes "acknowledge only what is durable" and "never store a batch twice" hold
// across collector crashes: a batch is stored together with its mark, or not at all.
//
// Implementations: RocksDbSeriesStore (rocksdb_series_store.h). Thread-safe: any
// method may be called from any thread; batches of one host are applied in order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collector/storage/meta_record.h"
#include "collector/storage/report_store.h"
#include "drip/v1/agent.pb.h"
#include "drip/v1/query.pb.h"

namespace drip::collector {

struct AppendResult {
  // False when the batch's sequence was at or below the host's high-water mark:
  // nothing was written (the agent resent a batch that was already durable).
  bool stored = false;
  uint64_t samples_stored = 0;
  // Number of sequence numbers skipped between the previous mark and this batch (the
  // agent dropped batches it could not buffer); recorded as a gap for the host.
  uint64_t missing_batches = 0;
  // Set when a repair had brought some of the batch's samples first: the batch as stored,
  // without them, which is what the detector should see. Unset: stored whole.
  std::optional<drip::v1::SampleBatch> stored_part;
};

class SeriesStore {
 public:
  virtual ~SeriesStore() = default;

  // Stores every sample of `batch` for `host` together with the host's new high-water
  // mark, and returns only once the write is in the WAL (fsynced when the store is
  // configured to sync). Samples must already be validated; an empty sample host means
  // `host`. Returns stored=false and writes nothing when batch.sequence() <= mark.
  virtual absl::StatusOr<AppendResult> AppendBatch(const std::string& host,
                                                   const drip::v1::SampleBatch& batch) = 0;

  // AppendBatch for a batch another member stored from the host's stream and handed to
  // this one as the host's replica (docs/cluster.md, "Replication"): its samples count in
  // the host's replica_samples_stored, not samples_stored, and sequences it skips are not
  // the agent's drops, so no gap is recorded (missing_batches still says how many).
  virtual absl::StatusOr<AppendResult> AppendReplicaBatch(const std::string& host,
                                                          const drip::v1::SampleBatch& batch) = 0;

  // Repair (docs/cluster.md, "Repair"): stores the samples of `batch` (another member's
  // copy of the host) that this store lacks, a sample matched by component, instance and
  // timestamp, beside the ones it has, and returns how many it stored. The host's
  // high-water mark and its gaps do not change; what is stored counts in
  // replica_samples_stored. Samples older than the retention are skipped. The host must
  // be known (PutHost) first.
  virtual absl::StatusOr<uint64_t> AppendRepairSamples(const std::string& host,
                                                       const drip::v1::SampleBatch& batch) = 0;

  // The host's high-water mark: highest sequence durably stored, 0 when none.
  virtual absl::StatusOr<uint64_t> AckedSequence(const std::string& host) = 0;

  // Upserts what a Hello says about a host (labels, agent version, memory size,
  // sampler). first_seen_ms is kept from the first call; counters kept by the store
  // (acked_sequence, samples_stored, gaps, last_seen_ms) are not overwritten.
  virtual absl::Status PutHost(const drip::v1::HostInfo& info) = 0;

  // Every known host with its stored counters filled in; `connected` is left false
  // (the server knows which streams are open, the store does not). Sorted by host.
  virtual absl::StatusOr<std::vector<drip::v1::HostInfo>> ListHosts() = 0;

  // Every instance of `component` on `host` with samples in [since_ms, until_ms)
  // (until_ms == 0: no upper bound), samples in time order, series ordered by their
  // first sample. Samples in the result have host/component/instance cleared.
  // `max_samples` (0: no limit) bounds what one call may hold in memory: past it the read
  // stops with RESOURCE_EXHAUSTED (a query that would not fit its answer anyway).
  virtual absl::StatusOr<std::vector<drip::v1::Series>> ReadSeries(const std::string& host,
                                                                   const std::string& component,
                                                                   int64_t since_ms,
                                                                   int64_t until_ms,
                                                                   size_t max_samples) = 0;

  // The gaps recorded for `host` (batches its agent dropped or that were lost), oldest
  // first; empty for an unknown host.
  virtual absl::StatusOr<std::vector<GapRecord>> ReadGaps(const std::string& host) = 0;

  // Every component `host` has stored series of (retained or not yet compacted away),
  // sorted. Used to rebuild the online detector at start.
  virtual absl::StatusOr<std::vector<std::string>> ListComponents(const std::string& host) = 0;

  // Every instance version the store keeps, host filled in, in key order (host,
  // component, first seen). Batches' versions (SampleBatch.versions) are stored with the
  // batch; the store keeps the latest kVersionsPerComponent of each host's component and
  // the first record of an instance reported again. Read by the collector at start.
  virtual absl::StatusOr<std::vector<drip::v1::InstanceVersion>> ReadInstanceVersions() = 0;
  // Enough for an instance and the few before it: a version change, and what ran before.
  static constexpr size_t kVersionsPerComponent = 8;

  // Deletes samples older than the retention and returns how many chunks it removed.
  // Called periodically by the collector; also safe to call at any time.
  virtual absl::StatusOr<uint64_t> EnforceRetention() = 0;

  // Live size of the store on disk (SST files + WAL + memtables), for metrics.
  virtual uint64_t ApproximateSizeBytes() = 0;

  // Distinct damaged host, index, version or gap records reads have skipped since the
  // store opened: one
  // such record is logged and left out, and the rest of the store is served (a
  // collector starts degraded rather than not at all).
  virtual uint64_t CorruptRecordsSkipped() = 0;

  // Bytes free for the store on its filesystem, for metrics and recovery.
  virtual absl::StatusOr<uint64_t> FreeDiskBytes() = 0;

  // OK while writes can succeed; otherwise why they cannot (a full disk, an I/O error),
  // which lasts until Recover() clears it. Reads do not change it. Cheap.
  virtual absl::Status WriteState() = 0;

  // Tries to make a store whose writes fail take writes again. OK when writes work (also
  // when nothing was wrong); ResourceExhausted when it did not try because the disk has
  // too little free space yet (cheap, call again soon); any other error when it tried
  // and failed (call again after a while). The collector calls it from one thread while
  // other calls go on.
  virtual absl::Status Recover() = 0;

  // Leak reports and the audit log, kept in the same database; owned by the store.
  virtual ReportStore* reports() = 0;
};

}  // namespace drip::collector
