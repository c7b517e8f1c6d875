// QueryServiceImpl: drip.v1.QueryService (dripctl's view of the fleet) on gRPC's
// callback API. Store reads can be slow (a long series), so each call runs on the
// service's own pool of reader threads and finishes its unary reactor from there.
//
//   ListHosts: every host the store knows, with `connected` from ConnectedHosts.
//   GetSeries: INVALID_ARGUMENT naming the field when host or component is empty or the
//              time range is inverted; NOT_FOUND when the host has never said hello;
//              an empty list when the host exists but has no such component. until_ms 0
//              has no upper bound (samples up to ingest.max_future_skew ahead included).
//   ListSuspects: the leak pipeline's suspects and suspected components, optionally of
//              one component, each with its heap snapshot.
//   ListLeaks, GetLeak, UpdateLeakState: the pipeline's reports; NOT_FOUND for an
//              unknown id.
//   Mitigate:  the pipeline's mitigations; answers once the commands are sent.
// The pipeline is reached only through its ReportDesk (pipeline/report_desk.h).
//   ListAudit: the audit log, newest first.
// In a cluster every read answers for the fleet (docs/cluster.md, "One fleet view"): the
// collector asks the other live members for their part (MemberQueryClient, which calls
// their MemberService: cluster/member_service.h) and merges it with its own
// (fleet_answer_merge.h), naming in `unanswered` the members whose part is missing.
// GetLeak finds a report another member holds; UpdateLeakState and Mitigate of such a
// report are refused with FAILED_PRECONDITION naming the member to ask, which holds the
// report, its hosts' streams and its audit log. Fleet calls wait on the members on
// threads of their own; the members answer their parts on the member API's readers, so
// two members asking each other cannot block each other.
// Every call is authorized by the AccessPolicy first: reads need the viewer role,
// UpdateLeakState and Mitigate the operator role; a refusal is UNAUTHENTICATED or
// PERMISSION_DENIED, counted in drip_query_denied_total and logged. Mutating calls record
// who asked in the audit log: the authenticated principal and the peer's address, then the
// request's self-declared actor.
//
// The work behind each RPC is a Do* method that needs no gRPC call, so that the message
// fuzzer runs exactly what an RPC runs once its caller is authorized, and a member's part
// of another's fan-out (MemberService) is exactly this collector's answer alone.
//
// Thread-safe. Must outlive the grpc::Server it is registered with.
#pragma once

#include <atomic>
#include <string_view>

#include "collector/access/access_policy.h"
#include "collector/cluster/cluster_membership.h"
#include "collector/cluster/member_query_client.h"
#include "collector/collector_metrics.h"
#include "collector/ingest/connected_hosts.h"
#include "collector/pipeline/report_desk.h"
#include "collector/storage/series_store.h"
#include "collector/worker_pool.h"
#include "common/base/clock.h"
#include "drip/v1/query.grpc.pb.h"

namespace drip::collector {

class QueryServiceImpl final : public drip::v1::QueryService::CallbackService {
 public:
  // Queries waiting for a reader, at most: past it a call is answered RESOURCE_EXHAUSTED
  // at once rather than queued without bound.
  static constexpr size_t kMaxQueuedQueries = 256;

  // Every pointer must outlive the service. `max_answer_bytes` is the largest answer the
  // server sends (grpc.max_message_bytes): a series read stops once it could not fit.
  QueryServiceImpl(const AccessPolicy* access, SeriesStore* store, ConnectedHosts* hosts,
                   ReportDesk* reports, CollectorMetrics* metrics, const Clock* clock,
                   uint64_t max_answer_bytes);
  // Runs the calls still queued on the readers, then stops them.
  ~QueryServiceImpl() override;

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
  grpc::ServerUnaryReactor* GetLeakSnapshot(grpc::CallbackServerContext* context,
                                            const drip::v1::GetLeakSnapshotRequest* request,
                                            drip::v1::HeapSnapshot* response) override;
  grpc::ServerUnaryReactor* GetLeak(grpc::CallbackServerContext* context,
                                    const drip::v1::GetLeakRequest* request,
                                    drip::v1::LeakReport* response) override;
  grpc::ServerUnaryReactor* UpdateLeakState(grpc::CallbackServerContext* context,
                                            const drip::v1::UpdateLeakStateRequest* request,
                                            drip::v1::LeakReport* response) override;
  grpc::ServerUnaryReactor* Mitigate(grpc::CallbackServerContext* context,
                                     const drip::v1::MitigateRequest* request,
                                     drip::v1::MitigateResponse* response) override;
  grpc::ServerUnaryReactor* ListAudit(grpc::CallbackServerContext* context,
                                      const drip::v1::ListAuditRequest* request,
                                      drip::v1::ListAuditResponse* response) override;
  grpc::ServerUnaryReactor* ListMembers(grpc::CallbackServerContext* context,
                                        const drip::v1::ListMembersRequest* request,
                                        drip::v1::ListMembersResponse* response) override;

  // The collector's membership in a cluster once it has joined, and the client that asks
  // the other members (both null: standalone, or leaving). Both must outlive the calls
  // that may use them. May be called while calls are served.
  // `replication_factor` is cluster.replication_factor (ListMembers names a host's copies).
  void set_cluster(const ClusterMembership* cluster, MemberQueryClient* members,
                   int replication_factor = 1) {
    replication_factor_.store(replication_factor);
    members_.store(members);
    cluster_.store(cluster);
  }

  // The work behind each RPC, for a caller already authorized.
  grpc::Status DoListHosts(drip::v1::ListHostsResponse* response);
  grpc::Status DoGetSeries(const drip::v1::GetSeriesRequest& request,
                           drip::v1::GetSeriesResponse* response);
  grpc::Status DoListSuspects(const drip::v1::ListSuspectsRequest& request,
                              drip::v1::ListSuspectsResponse* response);
  grpc::Status DoListLeaks(const drip::v1::ListLeaksRequest& request,
                           drip::v1::ListLeaksResponse* response);
  grpc::Status DoGetLeak(const drip::v1::GetLeakRequest& request, drip::v1::LeakReport* response);
  grpc::Status DoUpdateLeakState(const Caller& caller,
                                 const drip::v1::UpdateLeakStateRequest& request,
                                 drip::v1::LeakReport* response);
  grpc::Status DoMitigate(const Caller& caller, const drip::v1::MitigateRequest& request,
                          drip::v1::MitigateResponse* response);
  grpc::Status DoListAudit(const drip::v1::ListAuditRequest& request,
                           drip::v1::ListAuditResponse* response);
  grpc::Status DoListMembers(const drip::v1::ListMembersRequest& request,
                             drip::v1::ListMembersResponse* response);

 private:
  // Whom a call answers for: the fleet (a clustered collector), or this collector alone
  // (standalone).
  struct Scope {
    bool fleet = false;
    std::chrono::system_clock::time_point deadline =
        std::chrono::system_clock::time_point::max();  // the caller's
  };

  // The caller, when the call's credentials may call `method` with `required`; a refusal
  // is counted and logged.
  absl::StatusOr<Caller> Admit(const grpc::CallbackServerContext& context, Role required,
                               std::string_view method);

  // Authorizes the call for `required`, then runs `work(caller, scope)` on the reader
  // pool (the fan-out pool for a fleet call) and finishes the call's reactor with its
  // status.
  template <typename Work>
  grpc::ServerUnaryReactor* Serve(grpc::CallbackServerContext* context, Role required,
                                  std::string_view method, Work work);

  // The other live members' answers to `request` (none for a call that is not a fleet
  // call, or with no other member), timed in drip_query_fanout_seconds.
  template <typename Request, typename Response>
  std::vector<MemberAnswer<Response>> AskOthers(
      const Scope& scope, MemberQueryClient::AsyncMethod<Request, Response> method,
      const Request& request);
  // This member's name in merged answers.
  std::string SelfName() const;
  // Of `hosts`, those every one of whose copy holders (the first replication_factor of
  // the live members in each host's rendezvous order) is in `unanswered`.
  std::vector<std::string> HostsWithoutCopy(
      const std::vector<std::string>& hosts,
      const google::protobuf::RepeatedPtrField<drip::v1::MemberError>& unanswered) const;
  // `host`'s copies on `members` (the live ones, `names` their names, this one `self`),
  // each holder asked what it keeps.
  void ListCopies(const std::string& host, const std::vector<ClusterMember>& members,
                  const std::vector<std::string>& names, const std::string& self,
                  drip::v1::ListMembersResponse* response);

  // This member's answer when the call is not a fleet call; otherwise its part and the
  // other live members', merged by `merge` (fleet_answer_merge.h), the missing members
  // named in `unanswered`.
  template <typename Request, typename Response, typename Local, typename Merge>
  grpc::Status AnswerForFleet(const Scope& scope,
                              MemberQueryClient::AsyncMethod<Request, Response> method,
                              const Request& request, Local local, Merge merge, Response* response);
  grpc::Status FleetGetSeries(const Scope& scope, const drip::v1::GetSeriesRequest& request,
                              drip::v1::GetSeriesResponse* response);
  grpc::Status FleetGetLeak(const Scope& scope, const drip::v1::GetLeakRequest& request,
                            drip::v1::LeakReport* response);
  // Report `id`, which this collector does not hold (`local`, its NOT_FOUND), asked of the
  // other members: OK with `found` (the report and the member holding it) when one holds
  // it; `local` when none does; UNAVAILABLE naming the members that did not answer.
  grpc::Status FindLeakElsewhere(const Scope& scope, const std::string& id,
                                 const grpc::Status& local,
                                 MemberAnswer<drip::v1::LeakReport>* found);
  // For a report this collector does not hold: FAILED_PRECONDITION naming the member
  // that does, or the local NOT_FOUND when none does.
  grpc::Status HeldElsewhere(const Scope& scope, const std::string& id, const grpc::Status& local);
  // This member's copy; FAILED_PRECONDITION naming the member that keeps the report.
  grpc::Status DoGetLeakSnapshot(const Scope& scope,
                                 const drip::v1::GetLeakSnapshotRequest& request,
                                 drip::v1::HeapSnapshot* response);

  const AccessPolicy* access_;
  SeriesStore* store_;
  ConnectedHosts* hosts_;
  ReportDesk* reports_;
  CollectorMetrics* metrics_;
  const Clock* clock_;
  const uint64_t max_answer_bytes_;
  std::atomic<const ClusterMembership*> cluster_{nullptr};
  std::atomic<MemberQueryClient*> members_{nullptr};
  std::atomic<int> replication_factor_{1};
  // Query calls are few and read-only; two threads keep one slow series from blocking
  // dripctl hosts.
  WorkerPool readers_{"drip-query", 2, kMaxQueuedQueries};
  // Fleet calls mostly wait for the other members' answers.
  WorkerPool fanout_{"drip-fanout", 4, kMaxQueuedQueries};
};

}  // namespace drip::collector
