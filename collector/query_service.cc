#include "collector/query_service.h"

#include <algorithm>
#include <string>

#include "fmt/format.h"

namespace drip::collector {
namespace {

grpc::Status ToGrpc(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

// Runs `work` on `pool` and finishes the call's reactor with its status.
template <typename Work>
grpc::ServerUnaryReactor* RunOn(WorkerPool* pool, grpc::CallbackServerContext* context, Work work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!pool->Submit([reactor, work] { reactor->Finish(work()); })) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "collector is shutting down"));
  }
  return reactor;
}

}  // namespace

QueryServiceImpl::QueryServiceImpl(SeriesStore* store, ConnectedHosts* hosts, WorkerPool* readers,
                                   const OnlineDetector* detector,
                                   const SnapshotScheduler* snapshots)
    : store_(store), hosts_(hosts), readers_(readers), detector_(detector), snapshots_(snapshots) {}

grpc::ServerUnaryReactor* QueryServiceImpl::ListSuspects(
    grpc::CallbackServerContext* context, const drip::v1::ListSuspectsRequest* request,
    drip::v1::ListSuspectsResponse* response) {
  return RunOn(readers_, context, [this, request, response] {
    if (detector_ == nullptr) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "this collector runs no leak detector");
    }
    detector_->Fill(request->component(), response);
    if (snapshots_ != nullptr) snapshots_->Fill(response);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* QueryServiceImpl::ListHosts(grpc::CallbackServerContext* context,
                                                      const drip::v1::ListHostsRequest*,
                                                      drip::v1::ListHostsResponse* response) {
  return RunOn(readers_, context, [this, response] { return DoListHosts(response); });
}

grpc::ServerUnaryReactor* QueryServiceImpl::GetSeries(grpc::CallbackServerContext* context,
                                                      const drip::v1::GetSeriesRequest* request,
                                                      drip::v1::GetSeriesResponse* response) {
  return RunOn(readers_, context,
               [this, request, response] { return DoGetSeries(*request, response); });
}

grpc::Status QueryServiceImpl::DoListHosts(drip::v1::ListHostsResponse* response) {
  absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store_->ListHosts();
  if (!hosts.ok()) return ToGrpc(hosts.status());
  for (drip::v1::HostInfo& info : *hosts) {
    info.set_connected(hosts_->IsConnected(info.host()));
    *response->add_hosts() = std::move(info);
  }
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::DoGetSeries(const drip::v1::GetSeriesRequest& request,
                                           drip::v1::GetSeriesResponse* response) {
  if (request.host().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "host is required");
  }
  if (request.component().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "component is required");
  }
  if (request.since_ms() < 0 || request.until_ms() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "since_ms and until_ms must not be negative");
  }
  if (request.until_ms() != 0 && request.until_ms() <= request.since_ms()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        fmt::format("until_ms ({}) must be after since_ms ({})", request.until_ms(),
                                    request.since_ms()));
  }
  absl::StatusOr<std::vector<drip::v1::Series>> series = store_->ReadSeries(
      request.host(), request.component(), request.since_ms(), request.until_ms());
  if (!series.ok()) return ToGrpc(series.status());
  if (series->empty()) {
    // Only an empty answer pays for telling "unknown host" from "no such data".
    absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store_->ListHosts();
    if (!hosts.ok()) return ToGrpc(hosts.status());
    bool known = std::any_of(hosts->begin(), hosts->end(), [&](const drip::v1::HostInfo& h) {
      return h.host() == request.host();
    });
    if (!known) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          fmt::format("host '{}' is not known to this collector", request.host()));
    }
  }
  for (drip::v1::Series& s : *series) *response->add_series() = std::move(s);
  return grpc::Status::OK;
}

}  // namespace drip::collector
