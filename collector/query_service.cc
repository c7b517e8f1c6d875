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

grpc::Status NoReports() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "this collector keeps no leak reports");
}

bool IsReportState(const std::string& state) {
  return state == report_state::kOpen || state == report_state::kAcknowledged ||
         state == report_state::kMitigated || state == report_state::kResolved;
}

// Who asked, as the audit log records it: what the client says (dripctl sends
// user@host) and where the call came from, which the client cannot choose.
std::string ActorOf(const std::string& claimed, const grpc::CallbackServerContext* context) {
  const std::string who = claimed.empty() ? std::string("unknown") : claimed.substr(0, 200);
  return fmt::format("{} via {}", who, context->peer());
}

}  // namespace

QueryServiceImpl::QueryServiceImpl(const QuerySources& sources)
    : store_(sources.store),
      hosts_(sources.hosts),
      readers_(sources.readers),
      detector_(sources.detector),
      snapshots_(sources.snapshots),
      reports_(sources.reports),
      mitigations_(sources.mitigations),
      clock_(sources.clock) {}

grpc::ServerUnaryReactor* QueryServiceImpl::ListLeaks(grpc::CallbackServerContext* context,
                                                      const drip::v1::ListLeaksRequest* request,
                                                      drip::v1::ListLeaksResponse* response) {
  return RunOn(readers_, context, [this, request, response] {
    if (reports_ == nullptr) return NoReports();
    const std::string& state = request->state();
    if (!state.empty() && state != "all" && !IsReportState(state)) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          fmt::format("state: '{}' is not open, acknowledged, mitigated, resolved "
                                      "or all",
                                      state));
    }
    for (drip::v1::LeakReport& r : reports_->List(state, request->component())) {
      *response->add_reports() = std::move(r);
    }
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* QueryServiceImpl::GetLeak(grpc::CallbackServerContext* context,
                                                    const drip::v1::GetLeakRequest* request,
                                                    drip::v1::LeakReport* response) {
  return RunOn(readers_, context, [this, request, response] {
    if (reports_ == nullptr) return NoReports();
    absl::StatusOr<drip::v1::LeakReport> report = reports_->Get(request->id());
    if (!report.ok()) return ToGrpc(report.status());
    *response = std::move(*report);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* QueryServiceImpl::UpdateLeakState(
    grpc::CallbackServerContext* context, const drip::v1::UpdateLeakStateRequest* request,
    drip::v1::LeakReport* response) {
  const std::string actor = ActorOf(request->actor(), context);
  return RunOn(readers_, context, [this, request, response, actor] {
    if (reports_ == nullptr) return NoReports();
    absl::StatusOr<drip::v1::LeakReport> report = reports_->SetState(
        request->id(), request->state(), actor, request->note(), clock_->NowMs());
    if (!report.ok()) return ToGrpc(report.status());
    *response = std::move(*report);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* QueryServiceImpl::Mitigate(grpc::CallbackServerContext* context,
                                                     const drip::v1::MitigateRequest* request,
                                                     drip::v1::MitigateResponse* response) {
  const std::string actor = ActorOf(request->actor(), context);
  return RunOn(readers_, context, [this, request, response, actor] {
    if (mitigations_ == nullptr) return NoReports();
    absl::StatusOr<std::vector<drip::v1::AuditEntry>> entries =
        mitigations_->Request(*request, actor, clock_->NowMs());
    if (!entries.ok()) return ToGrpc(entries.status());
    for (drip::v1::AuditEntry& e : *entries) *response->add_entries() = std::move(e);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* QueryServiceImpl::ListAudit(grpc::CallbackServerContext* context,
                                                      const drip::v1::ListAuditRequest* request,
                                                      drip::v1::ListAuditResponse* response) {
  return RunOn(readers_, context, [this, request, response] {
    if (store_->reports() == nullptr) return NoReports();
    if (request->since_ms() < 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "since_ms must not be negative");
    }
    const size_t limit = request->limit() == 0 ? 100 : std::min<size_t>(request->limit(), 10000);
    absl::StatusOr<std::vector<drip::v1::AuditEntry>> entries =
        store_->reports()->ReadAudit(request->report_id(), request->since_ms(), limit);
    if (!entries.ok()) return ToGrpc(entries.status());
    for (drip::v1::AuditEntry& e : *entries) *response->add_entries() = std::move(e);
    return grpc::Status::OK;
  });
}

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
