#include "collector/query/query_service.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "collector/access/peer_credentials.h"
#include "collector/cluster/rendezvous.h"
#include "collector/query/fleet_answer_merge.h"
#include "collector/query/suspects_proto.h"
#include "collector/query/unary_on_pool.h"
#include "collector/storage/host_sample_counts.h"
#include "common/daemon/logging.h"
#include "common/rpc/grpc_conversions.h"
#include "common/rpc/report_state.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace drip::collector {
namespace {

bool IsReportState(const std::string& state) {
  return ParseReportState(state) != drip::v1::REPORT_STATE_UNSPECIFIED;
}

// Who asked, as the audit log records it: who the credentials prove the caller to be,
// and where the call came from, which the client cannot choose; then what the client
// says of itself (dripctl sends user@host), which is only a hint.
std::string ActorOf(const Caller& caller, const std::string& claimed) {
  const std::string says = claimed.substr(0, 200);
  if (caller.method == "unauthenticated") {
    return fmt::format("{} (unauthenticated) via {}", says.empty() ? "unknown" : says, caller.peer);
  }
  if (says.empty() || says == caller.name) return caller.Describe();
  return fmt::format("{}; client says {}", caller.Describe(), says);
}

// Each missing part named in the answer and counted.
template <typename Response>
void NoteUnanswered(const MemberAnswer<Response>& answer, CollectorMetrics* metrics,
                    google::protobuf::RepeatedPtrField<drip::v1::MemberError>* out) {
  metrics->query_fanout_member_errors.Increment();
  drip::v1::MemberError* e = out->Add();
  e->set_member(answer.member);
  e->set_address(answer.address);
  e->set_error(FromGrpcStatus(answer.status).ToString());
}

// The members' answers without their names.
template <typename Response>
std::vector<Response> AnswersOf(std::vector<MemberPart<Response>> parts) {
  std::vector<Response> out;
  out.reserve(parts.size());
  for (MemberPart<Response>& p : parts) out.push_back(std::move(p.response));
  return out;
}

using AsyncMember = drip::v1::MemberService::Stub::async_interface;

}  // namespace

QueryServiceImpl::QueryServiceImpl(const AccessPolicy* access, SeriesStore* store,
                                   ConnectedHosts* hosts, ReportDesk* reports,
                                   CollectorMetrics* metrics, const Clock* clock,
                                   uint64_t max_answer_bytes)
    : access_(access),
      store_(store),
      hosts_(hosts),
      reports_(reports),
      metrics_(metrics),
      clock_(clock),
      max_answer_bytes_(max_answer_bytes) {}

QueryServiceImpl::~QueryServiceImpl() {
  fanout_.Stop();
  readers_.Stop();
}

absl::StatusOr<Caller> QueryServiceImpl::Admit(const grpc::CallbackServerContext& context,
                                               Role required, std::string_view method) {
  absl::StatusOr<Caller> caller = access_->Authorize(CallerCredentialsOf(context), required);
  if (!caller.ok()) {
    metrics_->QueryDenied(method, caller.status().code()).Increment();
    Logger("collector")
        ->warn("query {} from {} refused: {}", method, context.peer(),
               std::string(caller.status().message()));
  }
  return caller;
}

template <typename Work>
grpc::ServerUnaryReactor* QueryServiceImpl::Serve(grpc::CallbackServerContext* context,
                                                  Role required, std::string_view method,
                                                  Work work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<Caller> caller = Admit(*context, required, method);
  if (!caller.ok()) {
    reactor->Finish(ToGrpcStatus(caller.status()));
    return reactor;
  }
  Scope scope;
  if (cluster_.load() != nullptr) {
    scope.fleet = true;
    scope.deadline = context->deadline();
  }
  FinishOnPool(scope.fleet ? fanout_ : readers_, reactor, metrics_->queries_shed,
               [work, c = std::move(*caller), s = std::move(scope)] { return work(c, s); });
  return reactor;
}

grpc::ServerUnaryReactor* QueryServiceImpl::ListHosts(grpc::CallbackServerContext* context,
                                                      const drip::v1::ListHostsRequest*,
                                                      drip::v1::ListHostsResponse* response) {
  return Serve(context, Role::kViewer, "ListHosts",
               [this, response](const Caller&, const Scope& scope) {
                 grpc::Status status = AnswerForFleet(
                     scope, &AsyncMember::ListHosts, drip::v1::ListHostsRequest(),
                     [this](drip::v1::ListHostsResponse* r) { return DoListHosts(r); },
                     [](auto parts) { return MergeHosts(std::move(parts)); }, response);
                 std::vector<std::string> hosts;
                 for (const drip::v1::HostInfo& h : response->hosts()) hosts.push_back(h.host());
                 for (std::string& host : HostsWithoutCopy(hosts, response->unanswered())) {
                   response->add_hosts_without_copy(std::move(host));
                 }
                 return status;
               });
}

std::vector<std::string> QueryServiceImpl::HostsWithoutCopy(
    const std::vector<std::string>& hosts,
    const google::protobuf::RepeatedPtrField<drip::v1::MemberError>& unanswered) const {
  const ClusterMembership* cluster = cluster_.load();
  if (cluster == nullptr || unanswered.empty()) return {};
  std::set<std::string> silent;
  for (const drip::v1::MemberError& e : unanswered) silent.insert(e.member());
  std::vector<std::string> names;
  for (const ClusterMember& m : cluster->Members()) names.push_back(m.name);
  return HostsWithNoCopyAnswering(hosts, names, replication_factor_.load(), silent);
}

grpc::ServerUnaryReactor* QueryServiceImpl::GetSeries(grpc::CallbackServerContext* context,
                                                      const drip::v1::GetSeriesRequest* request,
                                                      drip::v1::GetSeriesResponse* response) {
  return Serve(context, Role::kViewer, "GetSeries",
               [this, request, response](const Caller&, const Scope& scope) {
                 return FleetGetSeries(scope, *request, response);
               });
}

grpc::ServerUnaryReactor* QueryServiceImpl::ListSuspects(
    grpc::CallbackServerContext* context, const drip::v1::ListSuspectsRequest* request,
    drip::v1::ListSuspectsResponse* response) {
  return Serve(context, Role::kViewer, "ListSuspects",
               [this, request, response](const Caller&, const Scope& scope) {
                 return AnswerForFleet(
                     scope, &AsyncMember::ListSuspects, *request,
                     [&](drip::v1::ListSuspectsResponse* r) { return DoListSuspects(*request, r); },
                     [](auto parts) { return MergeSuspects(AnswersOf(std::move(parts))); },
                     response);
               });
}

grpc::ServerUnaryReactor* QueryServiceImpl::ListLeaks(grpc::CallbackServerContext* context,
                                                      const drip::v1::ListLeaksRequest* request,
                                                      drip::v1::ListLeaksResponse* response) {
  return Serve(context, Role::kViewer, "ListLeaks",
               [this, request, response](const Caller&, const Scope& scope) {
                 return AnswerForFleet(
                     scope, &AsyncMember::ListLeaks, *request,
                     [&](drip::v1::ListLeaksResponse* r) { return DoListLeaks(*request, r); },
                     [](auto parts) { return MergeLeaks(AnswersOf(std::move(parts))); }, response);
               });
}

grpc::ServerUnaryReactor* QueryServiceImpl::GetLeak(grpc::CallbackServerContext* context,
                                                    const drip::v1::GetLeakRequest* request,
                                                    drip::v1::LeakReport* response) {
  return Serve(context, Role::kViewer, "GetLeak",
               [this, request, response](const Caller&, const Scope& scope) {
                 return FleetGetLeak(scope, *request, response);
               });
}

grpc::ServerUnaryReactor* QueryServiceImpl::GetLeakSnapshot(
    grpc::CallbackServerContext* context, const drip::v1::GetLeakSnapshotRequest* request,
    drip::v1::HeapSnapshot* response) {
  return Serve(context, Role::kViewer, "GetLeakSnapshot",
               [this, request, response](const Caller&, const Scope& scope) {
                 return DoGetLeakSnapshot(scope, *request, response);
               });
}

grpc::ServerUnaryReactor* QueryServiceImpl::UpdateLeakState(
    grpc::CallbackServerContext* context, const drip::v1::UpdateLeakStateRequest* request,
    drip::v1::LeakReport* response) {
  return Serve(context, Role::kOperator, "UpdateLeakState",
               [this, request, response](const Caller& caller, const Scope& scope) {
                 grpc::Status status = DoUpdateLeakState(caller, *request, response);
                 if (status.error_code() != grpc::StatusCode::NOT_FOUND) return status;
                 return HeldElsewhere(scope, request->id(), status);
               });
}

grpc::ServerUnaryReactor* QueryServiceImpl::Mitigate(grpc::CallbackServerContext* context,
                                                     const drip::v1::MitigateRequest* request,
                                                     drip::v1::MitigateResponse* response) {
  return Serve(context, Role::kOperator, "Mitigate",
               [this, request, response](const Caller& caller, const Scope& scope) {
                 grpc::Status status = DoMitigate(caller, *request, response);
                 if (status.error_code() != grpc::StatusCode::NOT_FOUND) return status;
                 return HeldElsewhere(scope, request->id(), status);
               });
}

grpc::ServerUnaryReactor* QueryServiceImpl::ListAudit(grpc::CallbackServerContext* context,
                                                      const drip::v1::ListAuditRequest* request,
                                                      drip::v1::ListAuditResponse* response) {
  return Serve(context, Role::kViewer, "ListAudit",
               [this, request, response](const Caller&, const Scope& scope) {
                 const size_t limit =
                     request->limit() == 0 ? 100 : std::min<size_t>(request->limit(), 10000);
                 return AnswerForFleet(
                     scope, &AsyncMember::ListAudit, *request,
                     [&](drip::v1::ListAuditResponse* r) { return DoListAudit(*request, r); },
                     [limit](auto parts) { return MergeAudit(AnswersOf(std::move(parts)), limit); },
                     response);
               });
}

grpc::Status QueryServiceImpl::DoListSuspects(const drip::v1::ListSuspectsRequest& request,
                                              drip::v1::ListSuspectsResponse* response) {
  FleetSuspectsToProto(reports_->Suspects(request.component()), response);
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::DoListLeaks(const drip::v1::ListLeaksRequest& request,
                                           drip::v1::ListLeaksResponse* response) {
  const std::string& state = request.state();
  if (!state.empty() && state != "all" && !IsReportState(state)) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        fmt::format("state: '{}' is not open, acknowledged, mitigated, resolved or all", state));
  }
  for (drip::v1::LeakReport& r : reports_->ListReports(state, request.component())) {
    *response->add_reports() = std::move(r);
  }
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::DoGetLeak(const drip::v1::GetLeakRequest& request,
                                         drip::v1::LeakReport* response) {
  absl::StatusOr<drip::v1::LeakReport> report = reports_->GetReport(request.id());
  if (!report.ok()) return ToGrpcStatus(report.status());
  *response = std::move(*report);
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::DoGetLeakSnapshot(const Scope& scope,
                                                 const drip::v1::GetLeakSnapshotRequest& request,
                                                 drip::v1::HeapSnapshot* response) {
  if (absl::StatusOr<drip::v1::LeakReport> report = reports_->GetReport(request.id());
      !report.ok()) {
    // Snapshots stay with the member that keeps the report: the caller is sent there, as
    // for a state change, rather than megabytes relayed through this one.
    return HeldElsewhere(scope, request.id(), ToGrpcStatus(report.status()));
  }
  absl::StatusOr<std::string> bytes = reports_->ReportSnapshot(request.id(), request.first());
  if (!bytes.ok()) return ToGrpcStatus(bytes.status());
  if (!response->ParseFromString(*bytes)) {
    return grpc::Status(
        grpc::StatusCode::DATA_LOSS,
        fmt::format("leak report {}'s stored heap snapshot does not parse", request.id()));
  }
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::DoUpdateLeakState(const Caller& caller,
                                                 const drip::v1::UpdateLeakStateRequest& request,
                                                 drip::v1::LeakReport* response) {
  absl::StatusOr<drip::v1::LeakReport> report =
      reports_->SetReportState(request.id(), request.state(), ActorOf(caller, request.actor()),
                               request.note(), clock_->NowMs());
  if (!report.ok()) return ToGrpcStatus(report.status());
  *response = std::move(*report);
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::DoMitigate(const Caller& caller,
                                          const drip::v1::MitigateRequest& request,
                                          drip::v1::MitigateResponse* response) {
  absl::StatusOr<std::vector<drip::v1::AuditEntry>> entries =
      reports_->RequestMitigation(request, ActorOf(caller, request.actor()), clock_->NowMs());
  if (!entries.ok()) return ToGrpcStatus(entries.status());
  for (drip::v1::AuditEntry& e : *entries) *response->add_entries() = std::move(e);
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::DoListAudit(const drip::v1::ListAuditRequest& request,
                                           drip::v1::ListAuditResponse* response) {
  if (request.since_ms() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "since_ms must not be negative");
  }
  const size_t limit = request.limit() == 0 ? 100 : std::min<size_t>(request.limit(), 10000);
  absl::StatusOr<std::vector<drip::v1::AuditEntry>> entries =
      store_->reports()->ReadAudit(request.report_id(), request.since_ms(), limit);
  if (!entries.ok()) return ToGrpcStatus(entries.status());
  for (drip::v1::AuditEntry& e : *entries) *response->add_entries() = std::move(e);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* QueryServiceImpl::ListMembers(grpc::CallbackServerContext* context,
                                                        const drip::v1::ListMembersRequest* request,
                                                        drip::v1::ListMembersResponse* response) {
  return Serve(context, Role::kViewer, "ListMembers",
               [this, request, response](const Caller&, const Scope&) {
                 return DoListMembers(*request, response);
               });
}

grpc::Status QueryServiceImpl::DoListMembers(const drip::v1::ListMembersRequest& request,
                                             drip::v1::ListMembersResponse* response) {
  constexpr uint32_t kDefaultHostsPerMember = 100;
  constexpr uint32_t kMaxHostsPerMember = 10000;
  const size_t max_names = request.max_hosts_per_member() == 0
                               ? kDefaultHostsPerMember
                               : std::min(request.max_hosts_per_member(), kMaxHostsPerMember);
  absl::StatusOr<std::vector<drip::v1::HostInfo>> stored = store_->ListHosts();
  if (!stored.ok()) return ToGrpcStatus(stored.status());
  const ClusterMembership* cluster = cluster_.load();
  // Each member as the answer lists it, then the stored hosts placed on each.
  std::vector<ClusterMember> members;
  std::string self_name;
  if (cluster == nullptr) {
    response->set_mode("standalone");
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) == 0) self_name = name;
    members.push_back(ClusterMember{self_name, "", 0, 0});
  } else {
    response->set_mode("etcd");
    response->set_etcd_up(cluster->etcd_up());
    response->set_etcd_endpoint(cluster->etcd_endpoint_in_use());
    members = cluster->Members();
    self_name = cluster->member_name();
  }
  std::vector<std::string> names;
  for (const ClusterMember& m : members) names.push_back(m.name);
  std::map<std::string, drip::v1::ClusterMember> by_name;
  for (const ClusterMember& m : members) {
    drip::v1::ClusterMember& member = by_name[m.name];
    member.set_name(m.name);
    member.set_address(m.address);
    member.set_started_ms(m.started_ms);
    member.set_self(m.name == self_name);
    member.set_hosts_connected(member.self() ? hosts_->size() : m.hosts_connected);
  }
  // A standalone collector owns every host; in a cluster, rendezvous placement over the
  // live members says (docs/cluster.md). ListHosts answers in name order.
  auto owner_of = [&](const std::string& host) {
    return cluster == nullptr ? self_name : RendezvousOwner(host, names);
  };
  for (const drip::v1::HostInfo& host : *stored) {
    drip::v1::ClusterMember& member = by_name[owner_of(host.host())];
    member.set_hosts_placed(member.hosts_placed() + 1);
    if (request.host().empty() && static_cast<size_t>(member.hosts_size()) < max_names) {
      member.add_hosts(host.host());
    }
  }
  if (!request.host().empty()) by_name[owner_of(request.host())].add_hosts(request.host());
  for (const ClusterMember& m : members) *response->add_members() = std::move(by_name[m.name]);
  if (cluster != nullptr && !request.host().empty()) {
    ListCopies(request.host(), members, names, self_name, response);
  }
  return grpc::Status::OK;
}

void QueryServiceImpl::ListCopies(const std::string& host,
                                  const std::vector<ClusterMember>& members,
                                  const std::vector<std::string>& names, const std::string& self,
                                  drip::v1::ListMembersResponse* response) {
  // A day per count: the answer is the sum, the day only keeps it short.
  constexpr int64_t kCountWindowMs = 24 * 3600 * 1000;
  const std::vector<std::string> ranking = RendezvousRanking(host, names);
  const size_t holders =
      std::min(ranking.size(), static_cast<size_t>(std::max(1, replication_factor_.load())));
  std::vector<ClusterMember> others;
  for (size_t k = 0; k < holders; ++k) {
    drip::v1::HostCopy* copy = response->add_copies();
    copy->set_member(ranking[k]);
    copy->set_owner(k == 0);
    for (const ClusterMember& m : members) {
      if (m.name != ranking[k]) continue;
      copy->set_address(m.address);
      if (m.name != self) others.push_back(m);
    }
    if (ranking[k] != self) continue;
    absl::StatusOr<std::map<int64_t, uint64_t>> counts =
        CountHostSamples(store_, host, 0, kCountWindowMs);
    if (!counts.ok() && !absl::IsNotFound(counts.status())) {
      copy->set_error(counts.status().ToString());
    }
    for (const auto& [start, samples] : counts.value_or(std::map<int64_t, uint64_t>{})) {
      copy->set_samples(copy->samples() + samples);
    }
  }
  MemberQueryClient* client = members_.load();
  if (others.empty() || client == nullptr) return;
  drip::v1::CountHostSamplesRequest request;
  request.set_host(host);
  request.set_window_ms(kCountWindowMs);
  for (const auto& a : client->AskAll(
           others, &drip::v1::MemberService::Stub::async_interface::CountHostSamples, request)) {
    for (drip::v1::HostCopy& copy : *response->mutable_copies()) {
      if (copy.member() != a.member) continue;
      if (!a.status.ok() && a.status.error_code() != grpc::StatusCode::NOT_FOUND) {
        copy.set_error(FromGrpcStatus(a.status).ToString());
      }
      for (const auto& window : a.response.windows())
        copy.set_samples(copy.samples() + window.samples());
    }
  }
}

grpc::Status QueryServiceImpl::DoListHosts(drip::v1::ListHostsResponse* response) {
  absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store_->ListHosts();
  if (!hosts.ok()) return ToGrpcStatus(hosts.status());
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
  // A stored sample takes at least 16 bytes of the answer: a read past that many could
  // never be sent, so it stops there instead of holding it all first.
  absl::StatusOr<std::vector<drip::v1::Series>> series =
      store_->ReadSeries(request.host(), request.component(), request.since_ms(),
                         request.until_ms(), static_cast<size_t>(max_answer_bytes_ / 16));
  if (!series.ok()) return ToGrpcStatus(series.status());
  if (series->empty()) {
    // Only an empty answer pays for telling "unknown host" from "no such data".
    absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store_->ListHosts();
    if (!hosts.ok()) return ToGrpcStatus(hosts.status());
    bool known = std::any_of(hosts->begin(), hosts->end(), [&](const drip::v1::HostInfo& h) {
      return h.host() == request.host();
    });
    if (!known) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          fmt::format("host '{}' is not known to this collector", request.host()));
    }
  }
  for (drip::v1::Series& s : *series) *response->add_series() = std::move(s);
  // The host's gaps in the range, so that a reader sees "no data: dropped" rather than
  // a line drawn across the outage.
  absl::StatusOr<std::vector<GapRecord>> gaps = store_->ReadGaps(request.host());
  if (!gaps.ok()) return ToGrpcStatus(gaps.status());
  for (const GapRecord& g : *gaps) {
    const bool known_span = g.samples > 0 || g.until_ms > 0;
    const int64_t end = g.until_ms;
    const int64_t start = g.samples > 0 ? g.from_ms : g.until_ms;
    if (known_span &&
        (end < request.since_ms() || (request.until_ms() != 0 && start >= request.until_ms()))) {
      continue;
    }
    drip::v1::SeriesGap* out = response->add_gaps();
    out->set_from_ms(g.samples > 0 ? g.from_ms : 0);
    out->set_until_ms(g.until_ms);
    out->set_batches(g.missing_batches());
    out->set_samples(g.samples);
    out->set_recorded_ms(g.recorded_ms);
  }
  return grpc::Status::OK;
}

template <typename Request, typename Response>
std::vector<MemberAnswer<Response>> QueryServiceImpl::AskOthers(
    const Scope& scope, MemberQueryClient::AsyncMethod<Request, Response> method,
    const Request& request) {
  const ClusterMembership* cluster = cluster_.load();
  MemberQueryClient* client = members_.load();
  if (!scope.fleet || cluster == nullptr || client == nullptr) return {};
  std::vector<ClusterMember> others;
  for (ClusterMember& m : cluster->Members()) {
    if (m.name != cluster->member_name()) others.push_back(std::move(m));
  }
  if (others.empty()) return {};
  const auto start = std::chrono::steady_clock::now();
  std::vector<MemberAnswer<Response>> answers =
      client->AskAll(others, method, request, scope.deadline);
  metrics_->query_fanout_seconds.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return answers;
}

std::string QueryServiceImpl::SelfName() const {
  const ClusterMembership* cluster = cluster_.load();
  return cluster == nullptr ? std::string() : cluster->member_name();
}

template <typename Request, typename Response, typename Local, typename Merge>
grpc::Status QueryServiceImpl::AnswerForFleet(
    const Scope& scope, MemberQueryClient::AsyncMethod<Request, Response> method,
    const Request& request, Local local, Merge merge, Response* response) {
  if (!scope.fleet) return local(response);
  std::vector<MemberPart<Response>> parts(1);
  parts[0].member = SelfName();
  grpc::Status status = local(&parts[0].response);
  if (!status.ok()) return status;
  google::protobuf::RepeatedPtrField<drip::v1::MemberError> unanswered;
  for (auto& a : AskOthers(scope, method, request)) {
    if (a.status.ok()) {
      parts.push_back({a.member, std::move(a.response)});
    } else {
      NoteUnanswered(a, metrics_, &unanswered);
    }
  }
  *response = merge(std::move(parts));
  response->mutable_unanswered()->Swap(&unanswered);
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::FleetGetSeries(const Scope& scope,
                                              const drip::v1::GetSeriesRequest& request,
                                              drip::v1::GetSeriesResponse* response) {
  if (!scope.fleet) return DoGetSeries(request, response);
  std::vector<drip::v1::GetSeriesResponse> parts(1);
  grpc::Status local = DoGetSeries(request, &parts[0]);
  // A bad request is bad everywhere; a host unknown here may be known to another member.
  if (!local.ok() && local.error_code() != grpc::StatusCode::NOT_FOUND) return local;
  if (!local.ok()) parts.clear();
  google::protobuf::RepeatedPtrField<drip::v1::MemberError> unanswered;
  for (auto& a : AskOthers(scope, &AsyncMember::GetSeries, request)) {
    if (a.status.ok()) {
      parts.push_back(std::move(a.response));
    } else if (a.status.error_code() != grpc::StatusCode::NOT_FOUND) {
      NoteUnanswered(a, metrics_, &unanswered);
    }
  }
  if (parts.empty() && unanswered.empty()) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        fmt::format("host '{}' is not known to any collector", request.host()));
  }
  if (parts.empty()) {
    return grpc::Status(
        grpc::StatusCode::UNAVAILABLE,
        fmt::format("host '{}' is not known here, and {} member(s) did not answer (first: {} "
                    "at {}: {})",
                    request.host(), unanswered.size(), unanswered[0].member(),
                    unanswered[0].address(), unanswered[0].error()));
  }
  *response = MergeSeries(std::move(parts));
  // Each part fits one answer; together they may not. Never cut samples silently.
  const size_t max_samples = static_cast<size_t>(max_answer_bytes_ / 16);
  size_t samples = 0;
  for (const drip::v1::Series& s : response->series()) samples += s.samples_size();
  if (samples > max_samples) {
    response->Clear();
    return grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        fmt::format("the members hold {} samples of {} on '{}' in this range, more than one "
                    "answer carries ({}): ask for a shorter range (since/until)",
                    samples, request.component(), request.host(), max_samples));
  }
  response->mutable_unanswered()->Swap(&unanswered);
  for (std::string& host : HostsWithoutCopy({request.host()}, response->unanswered())) {
    response->add_hosts_without_copy(std::move(host));
  }
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::FindLeakElsewhere(const Scope& scope, const std::string& id,
                                                 const grpc::Status& local,
                                                 MemberAnswer<drip::v1::LeakReport>* found) {
  drip::v1::GetLeakRequest request;
  request.set_id(id);
  std::vector<std::string> silent;
  for (auto& a : AskOthers(scope, &AsyncMember::GetLeak, request)) {
    if (a.status.ok()) {
      *found = std::move(a);
      return grpc::Status::OK;
    }
    if (a.status.error_code() != grpc::StatusCode::NOT_FOUND) {
      metrics_->query_fanout_member_errors.Increment();
      silent.push_back(fmt::format("{} ({})", a.member, FromGrpcStatus(a.status).ToString()));
    }
  }
  if (silent.empty()) return local;
  // Not "no such report" while a member that may hold it did not say.
  return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                      fmt::format("report '{}' is not here, and members that may hold it did not "
                                  "answer: {}",
                                  id, fmt::join(silent, ", ")));
}

grpc::Status QueryServiceImpl::FleetGetLeak(const Scope& scope,
                                            const drip::v1::GetLeakRequest& request,
                                            drip::v1::LeakReport* response) {
  grpc::Status local = DoGetLeak(request, response);
  if (local.error_code() != grpc::StatusCode::NOT_FOUND) return local;
  MemberAnswer<drip::v1::LeakReport> found;
  grpc::Status status = FindLeakElsewhere(scope, request.id(), local, &found);
  if (status.ok()) *response = std::move(found.response);
  return status;
}

grpc::Status QueryServiceImpl::HeldElsewhere(const Scope& scope, const std::string& id,
                                             const grpc::Status& local) {
  MemberAnswer<drip::v1::LeakReport> found;
  grpc::Status status = FindLeakElsewhere(scope, id, local, &found);
  if (!status.ok()) return status;
  return grpc::Status(
      grpc::StatusCode::FAILED_PRECONDITION,
      fmt::format("report '{}' is kept by collector {}, which owns the component's report and "
                  "keeps its audit log: run this against it (dripctl --collector {})",
                  id, found.member, found.address));
}

}  // namespace drip::collector
