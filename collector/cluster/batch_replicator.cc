#include "collector/cluster/batch_replicator.h"

#include <vector>

#include "common/daemon/logging.h"
#include "common/rpc/grpc_conversions.h"

namespace drip::collector {

BatchReplicator::BatchReplicator(const ClusterMembership* membership, MemberQueryClient* members,
                                 int replication_factor, CollectorMetrics* metrics,
                                 ReplicaRepairer* repairer)
    : membership_(membership),
      members_(members),
      replication_factor_(replication_factor),
      metrics_(metrics),
      repairer_(repairer) {}

size_t BatchReplicator::Replicate(const drip::v1::HostInfo& host,
                                  const drip::v1::SampleBatch& batch) {
  if (replication_factor_ <= 1) return 0;
  std::vector<ClusterMember> replicas = membership_->OthersByPreference(host.host());
  const size_t wanted = static_cast<size_t>(replication_factor_ - 1);
  if (replicas.size() > wanted) replicas.resize(wanted);
  if (replicas.empty()) {
    // A member alone keeps the only copy there can be.
    metrics_->cluster_under_replicated_batches.Increment();
    return 0;
  }
  drip::v1::ReplicateRequest request;
  *request.mutable_host() = host;
  *request.mutable_batch() = batch;
  const auto start = std::chrono::steady_clock::now();
  std::vector<MemberAnswer<drip::v1::ReplicateResponse>> answers = members_->AskAll(
      replicas, &drip::v1::MemberService::Stub::async_interface::Replicate, request,
      std::chrono::system_clock::now() + kDeadline + std::chrono::milliseconds(250));
  metrics_->cluster_replication_seconds.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  size_t held = 0;
  for (const MemberAnswer<drip::v1::ReplicateResponse>& a : answers) {
    std::lock_guard<std::mutex> lock(mu_);
    if (a.status.ok()) {
      ++held;
      if (failing_.erase(a.member) > 0) {
        Logger("collector")->info("replica {} ({}) takes batches again", a.member, a.address);
      }
      continue;
    }
    repairer_->NoteMissed(host.host(), a.member);
    if (failing_.insert(a.member).second) {
      Logger("collector")
          ->warn(
              "replica {} ({}) did not take batch {} of {}: {}; batches go acknowledged "
              "on this member's copy alone until it does",
              a.member, a.address, batch.sequence(), host.host(),
              FromGrpcStatus(a.status).ToString());
    }
  }
  if (held == replicas.size() && replicas.size() == wanted) {
    metrics_->cluster_replicated_batches.Increment();
  } else {
    metrics_->cluster_under_replicated_batches.Increment();
  }
  return held;
}

}  // namespace drip::collector
