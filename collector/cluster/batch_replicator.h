// BatchReplicator: the owner's half of replication (docs/cluster.md, "Replication"). Each
// batch a member stores for a host streaming to it is copied to the host's replicas, the
// next replication_factor - 1 members of the host's rendezvous order, before the agent is
// acknowledged: when its owner dies, the member that takes the host over (the next in that
// order) already holds its samples and has judged them.
//
// The owner forwards rather than the agent streaming twice: the agent keeps one stream, one
// sequence and one acknowledgement, the replica receives exactly what the owner stored
// with the owner's sequence (so the store's high-water mark makes a copy sent twice land
// once), and a member that is not a replica costs nothing. A replica that refuses, fails
// or does not answer within kDeadline leaves the batch acknowledged on the owner's copy
// alone, counted as under-replicated (drip_cluster_under_replicated_batches_total) and
// logged once per replica until it takes batches again: the agent is never held up by a
// dead member for longer than the deadline, and no acknowledged batch is lost with one
// copy gone. The missed copy is repaired later (replica_repairer.h).
//
// Thread-safe: sessions of every host call Replicate at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <set>
#include <string>

#include "collector/cluster/cluster_membership.h"
#include "collector/cluster/member_query_client.h"
#include "collector/cluster/replica_repairer.h"
#include "collector/collector_metrics.h"
#include "drip/v1/agent.pb.h"
#include "drip/v1/query.pb.h"

namespace drip::collector {

class BatchReplicator {
 public:
  // How long a replica has to make a batch durable before the owner acknowledges without it.
  static constexpr std::chrono::milliseconds kDeadline{2000};

  // Every pointer must outlive the replicator; `replication_factor` counts the owner's
  // copy (1: no replicas).
  // `repairer` hears of every copy that missed a batch.
  BatchReplicator(const ClusterMembership* membership, MemberQueryClient* members,
                  int replication_factor, CollectorMetrics* metrics, ReplicaRepairer* repairer);

  // Copies `batch` of `host.host()` to its replicas at once and returns how many of them
  // hold it now, once each has answered or run out of time.
  size_t Replicate(const drip::v1::HostInfo& host, const drip::v1::SampleBatch& batch);

  int replication_factor() const { return replication_factor_; }

 private:
  const ClusterMembership* membership_;
  MemberQueryClient* members_;
  const int replication_factor_;
  CollectorMetrics* metrics_;
  ReplicaRepairer* repairer_;
  std::mutex mu_;
  std::set<std::string> failing_;  // replicas whose last copy failed, logged once
};

}  // namespace drip::collector
