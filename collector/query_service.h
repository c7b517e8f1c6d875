// QueryServiceImpl: drip.v1.QueryService (dripctl's view of the fleet) on gRPC's
// callback API. Store reads can be slow (a long series), so each call runs on a worker
// pool and finishes its unary reactor from there.
//
//   ListHosts: every host the store knows, with `connected` from ConnectedHosts.
//   GetSeries: INVALID_ARGUMENT naming the field when host or component is empty or the
//              time range is inverted; NOT_FOUND when the host has never said hello;
//              an empty list when the host exists but has no such component. until_ms 0
//              has no upper bound (samples up to ingest.max_future_skew ahead included).
//   ListSuspects: the online detector's suspects and suspected components, optionally
//              of one component; UNAVAILABLE when the collector runs without detector.
//   ListLeaks, GetLeak, UpdateLeakState: the LeakReportBook; NOT_FOUND for an unknown id.
//   Mitigate:  the MitigationCoordinator; answers once the commands are sent.
//   ListAudit: the audit log, newest first.
// Every call is authorized by the AccessPolicy first: reads need the viewer role,
// UpdateLeakState and Mitigate the operator role; a refusal is UNAUTHENTICATED or
// PERMISSION_DENIED, counted in drip_query_denied_total and logged. Mutating calls
// record who asked in the audit log: the authenticated principal and the peer's
// address, then the request's self-declared actor.
//
// Thread-safe. Must outlive the grpc::Server it is registered with.
#pragma once

#include <string_view>

#include "collector/access_policy.h"
#include "collector/collector_metrics.h"
#include "collector/connected_hosts.h"
#include "collector/leak_report_book.h"
#include "collector/mitigation_coordinator.h"
#include "collector/online_detector.h"
#include "collector/snapshot_scheduler.h"
#include "collector/storage/series_store.h"
#include "collector/worker_pool.h"
#include "common/clock.h"
#include "drip/v1/query.grpc.pb.h"

namespace drip::collector {

// What the query service reads from; every pointer must outlive the service. The
// optional parts answer UNAVAILABLE when absent.
struct QuerySources {
  const AccessPolicy* access = nullptr;  // null: open to everybody (tests)
  CollectorMetrics* metrics = nullptr;   // null: denials are not counted
  SeriesStore* store = nullptr;
  ConnectedHosts* hosts = nullptr;
  WorkerPool* readers = nullptr;
  const OnlineDetector* detector = nullptr;
  const SnapshotScheduler* snapshots = nullptr;
  LeakReportBook* reports = nullptr;
  MitigationCoordinator* mitigations = nullptr;
  const Clock* clock = SystemClock::Get();
};

class QueryServiceImpl final : public drip::v1::QueryService::CallbackService {
 public:
  explicit QueryServiceImpl(const QuerySources& sources);

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
  grpc::ServerUnaryReactor* UpdateLeakState(grpc::CallbackServerContext* context,
                                            const drip::v1::UpdateLeakStateRequest* request,
                                            drip::v1::LeakReport* response) override;
  grpc::ServerUnaryReactor* Mitigate(grpc::CallbackServerContext* context,
                                     const drip::v1::MitigateRequest* request,
                                     drip::v1::MitigateResponse* response) override;
  grpc::ServerUnaryReactor* ListAudit(grpc::CallbackServerContext* context,
                                      const drip::v1::ListAuditRequest* request,
                                      drip::v1::ListAuditResponse* response) override;

  // The work behind each RPC, callable without gRPC (and run on `readers` by the RPCs).
  grpc::Status DoListHosts(drip::v1::ListHostsResponse* response);
  grpc::Status DoGetSeries(const drip::v1::GetSeriesRequest& request,
                           drip::v1::GetSeriesResponse* response);

 private:
  // Authorizes the call for `required`, then runs `work(caller)` on the reader pool and
  // finishes the call's reactor with its status.
  template <typename Work>
  grpc::ServerUnaryReactor* Serve(grpc::CallbackServerContext* context, Role required,
                                  std::string_view method, Work work);

  const AccessPolicy* access_;
  CollectorMetrics* metrics_;
  SeriesStore* store_;
  ConnectedHosts* hosts_;
  WorkerPool* readers_;
  const OnlineDetector* detector_;
  const SnapshotScheduler* snapshots_;
  LeakReportBook* reports_;
  MitigationCoordinator* mitigations_;
  const Clock* clock_;
};

}  // namespace drip::collector
