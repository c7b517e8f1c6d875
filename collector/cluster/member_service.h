// MemberServiceImpl: drip.v1.MemberService, the API the collectors of a cluster call on
// each other (docs/cluster.md), kept apart from dripctl's QueryService so that neither
// widens the other.
//
//   ListHosts, GetSeries, ListSuspects, ListLeaks, GetLeak, ListAudit: this member's part
//              of a fleet-wide query, answered from what it holds alone, exactly as a
//              standalone collector answers the query (QueryServiceImpl's Do* methods);
//              it never asks the other members in turn.
//   RelayCommand: a mitigation the report's owner decided on, sent down the stream of a
//              host streaming here (the command router); answers with the agent's result.
//              Judged again here as this member's own (AdmitRelay): the report known
//              here, the caller its component's owner among the live members, the action
//              within this member's policy and hourly budget.
//   Replicate: a batch the host's owner stored, kept here as the host's replica
//              (ingest/replica_writer.h), on a pool of its own so that copies never wait
//              behind fleet-wide reads.
//
// Every call is admitted by AdmitMember (member_admission.h) first; a refusal is
// UNAUTHENTICATED or PERMISSION_DENIED, counted in drip_query_denied_total with method
// "member.<Rpc>" and logged. Reads run on the service's own reader pool, never on the
// query API's fan-out threads, so two members asking each other cannot block each other.
// Registered on every collector; answers FAILED_PRECONDITION until the collector has
// joined a cluster.
//
// Thread-safe. Must outlive the grpc::Server it is registered with.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>

#include "collector/access/access_policy.h"
#include "collector/cluster/cluster_membership.h"
#include "collector/collector_metrics.h"
#include "collector/ingest/command_router.h"
#include "collector/ingest/replica_writer.h"
#include "collector/pipeline/report_desk.h"
#include "collector/query/query_service.h"
#include "collector/worker_pool.h"
#include "common/base/clock.h"
#include "drip/v1/member.grpc.pb.h"

namespace drip::collector {

class MemberServiceImpl final : public drip::v1::MemberService::CallbackService {
 public:
  // Member parts waiting for a reader, at most (then RESOURCE_EXHAUSTED).
  static constexpr size_t kMaxQueuedCalls = 256;
  // The longest a relayed command waits for its agent, whatever the caller's deadline.
  static constexpr std::chrono::minutes kMaxRelayWait{10};

  // Every pointer must outlive the service. `local` answers the reads as this collector
  // alone.
  MemberServiceImpl(const AccessPolicy* access, QueryServiceImpl* local, CommandRouter* commands,
                    ReportDesk* reports, ReplicaWriter* replicas, CollectorMetrics* metrics,
                    const Clock* clock);
  // Runs the calls still queued on the readers, then stops them.
  ~MemberServiceImpl() override;

  // The collector's membership once it has joined (null: standalone, or leaving). Must
  // outlive the calls that may use it. May be called while calls are served.
  void set_cluster(const ClusterMembership* cluster) { cluster_.store(cluster); }

  grpc::ServerUnaryReactor* ListHosts(grpc::CallbackServerContext* context,
                                      const drip::v1::ListHostsRequest* request,
                                      drip::v1::ListHostsResponse* response) override;
  grpc::ServerUnaryReactor* GetSeries(grpc::CallbackServerContext* context,
                                      const drip::v1::GetSeriesRequest* request,
                                      drip::v1::GetSeriesResponse* response) override;
  grpc::ServerUnaryReactor* ListSuspects(grpc::CallbackServerContext* context,
                                         const drip::v1::ListSuspectsRequest* request,
                                         drip::v1::ListSuspectsResponse* response) override;
  grpc::ServerUnaryReactor* ListLeaks(grpc::CallbackServerContext* context,
                                      const drip::v1::ListLeaksRequest* request,
                                      drip::v1::ListLeaksResponse* response) override;
  grpc::ServerUnaryReactor* GetLeak(grpc::CallbackServerContext* context,
                                    const drip::v1::GetLeakRequest* request,
                                    drip::v1::LeakReport* response) override;
  grpc::ServerUnaryReactor* ListAudit(grpc::CallbackServerContext* context,
                                      const drip::v1::ListAuditRequest* request,
                                      drip::v1::ListAuditResponse* response) override;
  // Answers when the host's agent does (or the call's deadline passes, at most
  // kMaxRelayWait): the call is held, not a reader.
  grpc::ServerUnaryReactor* RelayCommand(grpc::CallbackServerContext* context,
                                         const drip::v1::RelayCommandRequest* request,
                                         drip::v1::RelayCommandResponse* response) override;
  grpc::ServerUnaryReactor* Replicate(grpc::CallbackServerContext* context,
                                      const drip::v1::ReplicateRequest* request,
                                      drip::v1::ReplicateResponse* response) override;
  grpc::ServerUnaryReactor* CountHostSamples(grpc::CallbackServerContext* context,
                                             const drip::v1::CountHostSamplesRequest* request,
                                             drip::v1::CountHostSamplesResponse* response) override;
  grpc::ServerUnaryReactor* RepairHost(grpc::CallbackServerContext* context,
                                       const drip::v1::RepairHostRequest* request,
                                       drip::v1::RepairHostResponse* response) override;

 private:
  // The member calling `method` (counted and logged when refused), with the cluster it
  // is a member of.
  absl::StatusOr<Caller> Admit(const grpc::CallbackServerContext& context,
                               const ClusterMembership* cluster, std::string_view method);

  // Admits the call, then runs `work()` on the readers and finishes the call with it.
  template <typename Work>
  grpc::ServerUnaryReactor* Serve(grpc::CallbackServerContext* context, std::string_view method,
                                  Work work);

  // RelayCommand's checks on this member's side: the host streams here, the caller is
  // the component's owner, the report is known and the action within this member's own
  // policy and budget.
  absl::Status AdmitRelay(const grpc::CallbackServerContext& context,
                          const ClusterMembership& cluster, const Caller& caller,
                          const std::string& host, const drip::v1::Command& command,
                          int64_t now_ms);

  const AccessPolicy* access_;
  QueryServiceImpl* local_;
  CommandRouter* commands_;
  ReportDesk* reports_;
  ReplicaWriter* replicas_;
  CollectorMetrics* metrics_;
  const Clock* clock_;
  std::atomic<const ClusterMembership*> cluster_{nullptr};
  WorkerPool readers_{"drip-member", 2, kMaxQueuedCalls};
  WorkerPool replica_writers_{"drip-replica", 2, kMaxQueuedCalls};
};

}  // namespace drip::collector
