#include "collector/ingest/replica_writer.h"

#include "collector/storage/host_sample_counts.h"
#include "fmt/format.h"

namespace drip::collector {

ReplicaWriter::ReplicaWriter(const SampleValidator* validator, SeriesStore* store,
                             DetectorFeed* detector, CollectorMetrics* metrics)
    : validator_(validator), store_(store), detector_(detector), metrics_(metrics) {}

absl::Status ReplicaWriter::Admit(const drip::v1::HostInfo& host,
                                  const drip::v1::SampleBatch& batch) {
  if (host.host().empty()) return absl::InvalidArgumentError("host.host is empty");
  // The owner checked it already; a member is trusted no further than an agent is.
  const Verdict verdict =
      validator_->ValidateBatch(batch, host.host(), static_cast<size_t>(batch.ByteSizeLong()));
  if (!verdict.ok()) {
    return absl::InvalidArgumentError(fmt::format("batch {} of {}: {}", batch.sequence(),
                                                  host.host(),
                                                  std::string(verdict.status.message())));
  }
  bool first_here = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    first_here = hosts_put_.insert(host.host()).second;
  }
  if (!first_here) return absl::OkStatus();
  drip::v1::HostInfo info = host;
  // The store keeps its own counters; only what the hello said is the owner's to give.
  info.clear_acked_sequence();
  info.clear_samples_stored();
  info.clear_replica_samples_stored();
  info.clear_gaps();
  if (absl::Status put = store_->PutHost(info); !put.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    hosts_put_.erase(host.host());
    return put;
  }
  if (PlausibleHostMemory(host.memory_total_bytes())) {
    detector_->SetHostMemory(host.host(), host.memory_total_bytes());
  }
  return absl::OkStatus();
}

absl::StatusOr<ReplicaWrite> ReplicaWriter::Write(const drip::v1::HostInfo& host,
                                                  const drip::v1::SampleBatch& batch) {
  if (absl::Status admitted = Admit(host, batch); !admitted.ok()) return admitted;
  absl::StatusOr<AppendResult> result = store_->AppendReplicaBatch(host.host(), batch);
  if (!result.ok()) return result.status();
  if (result->stored) {
    detector_->ObserveReplicaBatch(host.host(), result->stored_part ? *result->stored_part : batch);
    metrics_->cluster_replica_batches.Increment();
  }
  absl::StatusOr<uint64_t> acked = store_->AckedSequence(host.host());
  if (!acked.ok()) return acked.status();
  return ReplicaWrite{result->stored, *acked};
}

absl::StatusOr<uint64_t> ReplicaWriter::Repair(const drip::v1::HostInfo& host,
                                               const drip::v1::SampleBatch& batch, bool last) {
  if (absl::Status admitted = Admit(host, batch); !admitted.ok()) return admitted;
  absl::StatusOr<uint64_t> stored = store_->AppendRepairSamples(host.host(), batch);
  if (!stored.ok()) return stored.status();
  metrics_->cluster_repaired_samples.Increment(*stored);
  uint64_t repaired = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    repaired = repaired_[host.host()] += *stored;
    if (last) repaired_.erase(host.host());
  }
  // Older samples than the detector judged: it judges the host again from the start of
  // its history. Nothing new: what it judged stands.
  if (last && repaired > 0) {
    absl::StatusOr<uint64_t> replayed = detector_->ReplayHost(host.host());
    if (!replayed.ok()) return replayed.status();
  }
  return *stored;
}

absl::StatusOr<std::map<int64_t, uint64_t>> ReplicaWriter::Count(const std::string& host,
                                                                 int64_t since_ms,
                                                                 int64_t window_ms) {
  return CountHostSamples(store_, host, since_ms, window_ms);
}

}  // namespace drip::collector
