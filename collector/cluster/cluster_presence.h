// ClusterPresence: this collector as a member of a cluster (docs/cluster.md), as one part
// with one owner. It joins etcd and keeps the lease (ClusterMembership), sends the streams
// of hosts placed on another member there when members come and go, shares the detector's
// fleet drift with the others and sums theirs, keeps one owner for each component's leak
// report (ReportOwnership), and carries mitigations to hosts streaming to other members
// (MemberCommandRelay), and copies each batch of its own hosts to their replicas
// (BatchReplicator). The query and member APIs are pointed at membership() and
// member_queries() by whoever wires the collector.
//
// Made by Join once the gRPC port is bound; Start after the pipeline has started; Stop
// before the pipeline, the query service and the sessions go, and the object itself after
// the query service (whose fan-out threads may still hold member_queries()).
// Thread-safe where noted; Join, Start, Stop from the owner.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "collector/cluster/batch_replicator.h"
#include "collector/cluster/cluster_membership.h"
#include "collector/cluster/member_command_relay.h"
#include "collector/cluster/member_query_client.h"
#include "collector/cluster/replica_repairer.h"
#include "collector/cluster/report_ownership.h"
#include "collector/collector_config.h"
#include "collector/collector_metrics.h"
#include "collector/ingest/connected_hosts.h"
#include "collector/pipeline/leak_pipeline.h"

namespace drip::collector {

// The name this collector has among the members: cluster.member_name, else the host's.
std::string MemberNameOf(const CollectorConfig& config);

class ClusterPresence {
 public:
  // What the member works on; each must outlive it.
  struct Parts {
    ConnectedHosts* hosts = nullptr;   // drained to another member when placement says so
    LeakPipeline* pipeline = nullptr;  // drift, report ownership, the relay
    CollectorMetrics* metrics = nullptr;
    SeriesStore* store = nullptr;  // compared with, and repaired from, the other copies
    const Clock* clock = nullptr;
  };

  // With cluster.etcd_endpoints: registers in etcd, advertising `bound_grpc` (the address
  // a local client dials; `grpc_port` the bound port) unless cluster.advertise_address
  // says otherwise. The error names what failed ("cluster: ...").
  static absl::StatusOr<std::unique_ptr<ClusterPresence>> Join(const CollectorConfig& config,
                                                               const std::string& bound_grpc,
                                                               int grpc_port, Parts parts);
  ~ClusterPresence();  // Stop()

  ClusterPresence(const ClusterPresence&) = delete;
  ClusterPresence& operator=(const ClusterPresence&) = delete;

  // Starts the report owner's rounds.
  void Start();
  // Before leaving, once no agent stream writes here any more: hands what only this
  // member holds of its hosts to the members that go on holding them
  // (ReplicaRepairer::HandOver), within `budget`.
  void HandOver(std::chrono::milliseconds budget);
  // Revokes the lease, so that the others see this member leave at once. Idempotent.
  void Leave();
  // Stops the rounds and detaches from the pipeline; the relay's calls in flight end
  // (their mitigations fail, audited). Idempotent.
  void Stop();

  // The member that owns `host` when it is another one (ClusterMembership::OwnerElsewhere);
  // nullopt once stopped. Thread-safe: agent sessions ask at every hello.
  std::optional<ClusterMember> OwnerElsewhere(const std::string& host) const;

  // Copies a batch this member stored (or had already) to the host's replicas
  // (BatchReplicator::Replicate); nothing once stopped. Thread-safe: every agent session
  // calls it before its ack.
  void Replicate(const drip::v1::HostInfo& host, const drip::v1::SampleBatch& batch) const;
  int replication_factor() const { return replicator_->replication_factor(); }

  const ClusterMembership* membership() const { return membership_.get(); }
  MemberQueryClient* member_queries() const { return member_queries_.get(); }

 private:
  ClusterPresence(Parts parts, std::unique_ptr<ClusterMembership> membership,
                  std::unique_ptr<MemberQueryClient> member_queries);

  // A member joined or left: streams of hosts now placed on another member drain there.
  void DrainHostsPlacedElsewhere();
  // The other members' fleet drift, by member name, as they shared it.
  void TakePeerDrifts(const std::map<std::string, std::string>& shares);

  const Parts parts_;
  std::unique_ptr<ClusterMembership> membership_;
  std::unique_ptr<MemberQueryClient> member_queries_;
  std::unique_ptr<ReplicaRepairer> repairer_;          // gone before membership_
  std::unique_ptr<BatchReplicator> replicator_;        // gone before repairer_
  std::unique_ptr<MemberCommandRelay> command_relay_;  // gone before membership_
  std::unique_ptr<ReportOwnership> report_ownership_;  // gone before membership_
  size_t drift_unreadable_ = 0;                        // membership thread only
  std::atomic<bool> stopped_{false};
  // repairer_ for the membership thread's callback, which may run before it is made.
  std::atomic<ReplicaRepairer*> repairer_to_wake_{nullptr};
};

}  // namespace drip::collector
