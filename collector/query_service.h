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
//
// Thread-safe. Must outlive the grpc::Server it is registered with.
#pragma once

#include "collector/connected_hosts.h"
#include "collector/online_detector.h"
#include "collector/snapshot_scheduler.h"
#include "collector/storage/series_store.h"
#include "collector/worker_pool.h"
#include "drip/v1/query.grpc.pb.h"

namespace drip::collector {

class QueryServiceImpl final : public drip::v1::QueryService::CallbackService {
 public:
  // Every pointer must outlive the service.
  QueryServiceImpl(SeriesStore* store, ConnectedHosts* hosts, WorkerPool* readers,
                   const OnlineDetector* detector = nullptr,
                   const SnapshotScheduler* snapshots = nullptr);

  grpc::ServerUnaryReactor* ListHosts(grpc::CallbackServerContext* context,
                                      const drip::v1::ListHostsRequest* request,
                                      drip::v1::ListHostsResponse* response) override;
  grpc::ServerUnaryReactor* GetSeries(grpc::CallbackServerContext* context,
                                      const drip::v1::GetSeriesRequest* request,
                                      drip::v1::GetSeriesResponse* response) override;
  grpc::ServerUnaryReactor* ListSuspects(grpc::CallbackServerContext* context,
                                         const drip::v1::ListSuspectsRequest* request,
                                         drip::v1::ListSuspectsResponse* response) override;

  // The work behind each RPC, callable without gRPC (and run on `readers` by the RPCs).
  grpc::Status DoListHosts(drip::v1::ListHostsResponse* response);
  grpc::Status DoGetSeries(const drip::v1::GetSeriesRequest& request,
                           drip::v1::GetSeriesResponse* response);

 private:
  SeriesStore* store_;
  ConnectedHosts* hosts_;
  WorkerPool* readers_;
  const OnlineDetector* detector_;
  const SnapshotScheduler* snapshots_;
};

}  // namespace drip::collector
