#include "collector/query_service.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "collector/cluster/rendezvous.h"
#include "collector/fleet_answer_merge.h"
#include "collector/peer_credentials.h"
#include "collector/suspects_proto.h"
#include "common/daemon/listen_address.h"
#include "common/daemon/logging.h"
#include "common/rpc/grpc_conversions.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace drip::collector {
namespace {

// What a relaying member says of who asked it, for logs and the audit log: a claim, not an
// identity, so it is kept short and printable (it reaches on-call's terminal).
std::string ClaimedRequester(std::string_view claim) {
  constexpr size_t kMaxClaimBytes = 128;
  if (claim.empty()) return "(nobody named)";
  std::string out;
  for (char c : claim.substr(0, kMaxClaimBytes)) {
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  if (claim.size() > kMaxClaimBytes) out += "...";
  return out;
}

bool IsReportState(const std::string& state) {
  return state == report_state::kOpen || state == report_state::kAcknowledged ||
         state == report_state::kMitigated || state == report_state::kResolved;
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

// Whether the call is a member's part of another collector's fleet-wide query.
bool IsMemberPart(const grpc::CallbackServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kQueryScopeKey);
  return it != metadata.end() &&
         std::string_view(it->second.data(), it->second.size()) == kQueryScopeMember;
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

using AsyncQuery = drip::v1::QueryService::Stub::async_interface;

}  // namespace

QueryServiceImpl::QueryServiceImpl(const AccessPolicy* access, SeriesStore* store,
                                   ConnectedHosts* hosts, LeakPipeline* pipeline,
                                   CollectorMetrics* metrics, const Clock* clock,
                                   uint64_t max_answer_bytes)
    : access_(access),
      store_(store),
      hosts_(hosts),
      pipeline_(pipeline),
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
  if (cluster_.load() != nullptr && !IsMemberPart(*context)) {
    scope.fleet = true;
    scope.deadline = context->deadline();
  }
  // Store reads can be slow (a long series): on a pool, never on gRPC's thread.
  WorkerPool& pool = scope.fleet ? fanout_ : readers_;
  if (!pool.Submit([reactor, work, c = std::move(*caller), s = std::move(scope)] {
        reactor->Finish(work(c, s));
      })) {
    if (pool.stopping()) {
      reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "collector is shutting down"));
    } else {
      // Shed rather than queue without bound: each queued call holds its request and,
      // once read, its answer.
      metrics_->queries_shed.Increment();
      reactor->Finish(grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          fmt::format("the collector has {} queries waiting; retry shortly", kMaxQueuedQueries)));
    }
  }
  return reactor;
}

grpc::ServerUnaryReactor* QueryServiceImpl::ListHosts(grpc::CallbackServerContext* context,
                                                      const drip::v1::ListHostsRequest*,
                                                      drip::v1::ListHostsResponse* response) {
  return Serve(context, Role::kViewer, "ListHosts",
               [this, response](const Caller&, const Scope& scope) {
                 return AnswerForFleet(
                     scope, &AsyncQuery::ListHosts, drip::v1::ListHostsRequest(),
                     [this](drip::v1::ListHostsResponse* r) { return DoListHosts(r); },
                     [](auto parts) { return MergeHosts(std::move(parts)); }, response);
               });
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
                     scope, &AsyncQuery::ListSuspects, *request,
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
                     scope, &AsyncQuery::ListLeaks, *request,
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
                     scope, &AsyncQuery::ListAudit, *request,
                     [&](drip::v1::ListAuditResponse* r) { return DoListAudit(*request, r); },
                     [limit](auto parts) { return MergeAudit(AnswersOf(std::move(parts)), limit); },
                     response);
               });
}

namespace {

// A RelayCommand call whose command waits for its agent, finished once: by the agent's
// answer (through RelayedCommands, which Expire ends too), or by the caller giving up
// first, which takes the command back with the ticket only this call holds.
class RelayReactor final : public grpc::ServerUnaryReactor {
 public:
  RelayReactor(RelayedCommands* relayed, std::string command_id,
               drip::v1::RelayCommandResponse* response)
      : relayed_(relayed), command_id_(std::move(command_id)), response_(response) {}

  void Answer(absl::StatusOr<drip::v1::CommandResult> result) {
    if (!result.ok()) {
      Finish(ToGrpcStatus(result.status()));
      return;
    }
    *response_->mutable_result() = std::move(*result);
    Finish(grpc::Status::OK);
  }

  // The command is waiting under `ticket`; the caller's cancel may take it back from now.
  void Waiting(uint64_t ticket) { ticket_.store(ticket); }

  // Takes the waiting command back; true (and the call finished) when the answer had not
  // come first.
  bool TakeBack() {
    const uint64_t ticket = ticket_.load();
    if (ticket == 0 || !relayed_->Cancel(command_id_, ticket)) return false;
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the relaying call was cancelled"));
    return true;
  }

  void OnCancel() override { (void)TakeBack(); }
  void OnDone() override { delete this; }

 private:
  RelayedCommands* relayed_;
  const std::string command_id_;
  drip::v1::RelayCommandResponse* response_;
  std::atomic<uint64_t> ticket_{0};
};

}  // namespace

grpc::ServerUnaryReactor* QueryServiceImpl::RelayCommand(
    grpc::CallbackServerContext* context, const drip::v1::RelayCommandRequest* request,
    drip::v1::RelayCommandResponse* response) {
  auto refuse = [context](grpc::Status status) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(std::move(status));
    return reactor;
  };
  absl::StatusOr<Caller> caller = Admit(*context, Role::kMember, "RelayCommand");
  if (!caller.ok()) return refuse(ToGrpcStatus(caller.status()));
  // A relayed command skips the planner's limits, which its owner applied: people
  // mitigate through Mitigate, however high their role (only an open policy, where
  // anyone may do anything, lets everybody in).
  if (caller->role != Role::kMember && caller->method != "unauthenticated") {
    metrics_->QueryDenied("RelayCommand", absl::StatusCode::kPermissionDenied).Increment();
    Logger("collector")
        ->warn("query RelayCommand from {} refused: {} is not a member", context->peer(),
               caller->Describe());
    return refuse(grpc::Status(
        grpc::StatusCode::PERMISSION_DENIED,
        fmt::format("{} is a {}; RelayCommand is for the collectors of a cluster (role member): "
                    "mitigate with Mitigate (dripctl mitigate)",
                    caller->name, RoleName(caller->role))));
  }
  if (cluster_.load() == nullptr) {
    return refuse(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                               "this collector is not a member of a cluster"));
  }
  const drip::v1::Command& command = request->command();
  if (request->host().empty() || command.id().empty() || !command.has_mitigation()) {
    return refuse(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                               "host, command.id and command.mitigation are required: only "
                               "mitigations are relayed"));
  }
  const drip::v1::MitigationCommand& m = command.mitigation();
  const int64_t now_ms = clock_->NowMs();
  // The delivering member applies its own checks: the caller must be the component's
  // owner among the live members, and the action within this member's policy and budget.
  const std::string requested_by = ClaimedRequester(request->requested_by());
  if (absl::Status admitted = AdmitRelay(*context, *caller, request->host(), command, now_ms);
      !admitted.ok()) {
    metrics_->cluster_relays_refused.Increment();
    Logger("collector")
        ->warn("relay of {} ({} of report {}) to {} from {} (says it acts for {}) refused: {}",
               command.id(), m.action(), m.report_id(), request->host(), caller->Describe(),
               requested_by, std::string(admitted.message()));
    return refuse(ToGrpcStatus(admitted));
  }
  response->set_member(SelfName());
  const auto wait = std::min<std::chrono::system_clock::duration>(
      context->deadline() - std::chrono::system_clock::now(), kMaxRelayWait);
  const int64_t deadline_ms =
      now_ms + std::chrono::duration_cast<std::chrono::milliseconds>(wait).count();
  auto* reactor = new RelayReactor(&pipeline_->relayed(), command.id(), response);
  absl::StatusOr<uint64_t> ticket =
      pipeline_->relayed().Send(request->host(), command, deadline_ms,
                                [reactor](absl::StatusOr<drip::v1::CommandResult> result) {
                                  reactor->Answer(std::move(result));
                                });
  if (!ticket.ok()) {
    Logger("collector")
        ->warn("relay of {} ({} of report {}) to {} for {} refused: {}", command.id(), m.action(),
               m.report_id(), request->host(), caller->Describe(),
               std::string(ticket.status().message()));
    reactor->Finish(ToGrpcStatus(ticket.status()));
    return reactor;
  }
  reactor->Waiting(*ticket);
  // A cancel that came before the command was waiting found nothing to take back.
  if (context->IsCancelled() && reactor->TakeBack()) return reactor;
  metrics_->cluster_relays_delivered.Increment();
  const std::string target = m.unit().empty() ? fmt::format("pid {}", m.pid()) : m.unit();
  Logger("collector")
      ->warn("relayed mitigation {} of report {} to {}: {} {}{} for {}, which says it acts for {}",
             command.id(), m.report_id(), request->host(), m.action(), target,
             m.dry_run() ? " (dry-run)" : "", caller->Describe(), requested_by);
  // The owner's audit log has the mitigation and its outcome; this one says who delivered
  // it, and for whom (an outcome dripctl does not wait on).
  std::vector<drip::v1::AuditEntry> delivered(1);
  drip::v1::AuditEntry& e = delivered[0];
  e.set_time_ms(now_ms);
  e.set_actor(fmt::format("{}; says it acts for {}", caller->Describe(), requested_by));
  e.set_report_id(m.report_id());
  e.set_component(m.component());
  e.set_host(request->host());
  e.set_action(m.action());
  e.set_target(target);
  e.set_dry_run(m.dry_run());
  e.set_outcome("delivered");
  e.set_detail("relayed to the host's stream here for the report's owner");
  e.set_command_id(command.id());
  (void)pipeline_->reports().Audit(&delivered);  // a failed write is logged and counted
  return reactor;
}

absl::Status QueryServiceImpl::AdmitRelay(const grpc::CallbackServerContext& context,
                                          const Caller& caller, const std::string& host,
                                          const drip::v1::Command& command, int64_t now_ms) {
  const ClusterMembership* cluster = cluster_.load();
  const drip::v1::MitigationCommand& m = command.mitigation();
  // First, as RelayedCommands::Send says it: the owner asks the next member in the host's
  // order on this answer, and only on this one (any other refusal ends the mitigation).
  if (!hosts_->IsConnected(host)) {
    return absl::FailedPreconditionError(fmt::format("host {} does not stream here", host));
  }
  std::vector<std::string> names;
  std::optional<ClusterMember> owner;
  const std::vector<ClusterMember> members = cluster->Members();
  for (const ClusterMember& member : members) names.push_back(member.name);
  const std::string owner_name = RendezvousOwner(m.component(), names);
  for (const ClusterMember& member : members) {
    if (member.name == owner_name) owner = member;
  }
  if (!owner.has_value() || owner->name == cluster->member_name()) {
    return absl::PermissionDeniedError(
        fmt::format("{} is owned by {} among the live members, not by a member that relays",
                    m.component(), owner_name.empty() ? "no member" : owner_name));
  }
  // Over TLS the caller is known by its certificate: it must be the owner's, whose names
  // include the host the owner advertises (docs/cluster.md). A plaintext cluster has no
  // identity to check.
  const CallerCredentials credentials = CallerCredentialsOf(context);
  if (caller.method == "certificate") {
    absl::StatusOr<ListenAddress> address = ListenAddress::Parse(owner->address);
    const std::string owner_host = address.ok() ? address->host : owner->address;
    if (std::find(credentials.certificate_names.begin(), credentials.certificate_names.end(),
                  owner_host) == credentials.certificate_names.end()) {
      return absl::PermissionDeniedError(fmt::format(
          "the caller's certificate does not name {}, where {} (the owner of {}) is reached: "
          "only a report's owner relays its mitigations",
          owner_host, owner->name, m.component()));
    }
  }
  absl::StatusOr<drip::v1::LeakReport> report = pipeline_->KnownReport(m.report_id());
  if (!report.ok()) return report.status();
  return pipeline_->mitigations().AdmitRelayed(std::move(*report), host, command.id(), m, now_ms);
}

grpc::Status QueryServiceImpl::DoListSuspects(const drip::v1::ListSuspectsRequest& request,
                                              drip::v1::ListSuspectsResponse* response) {
  FleetSuspectsToProto(pipeline_->Suspects(request.component()), response);
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
  for (drip::v1::LeakReport& r : pipeline_->reports().List(state, request.component())) {
    *response->add_reports() = std::move(r);
  }
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::DoGetLeak(const drip::v1::GetLeakRequest& request,
                                         drip::v1::LeakReport* response) {
  absl::StatusOr<drip::v1::LeakReport> report = pipeline_->reports().Get(request.id());
  if (!report.ok()) return ToGrpcStatus(report.status());
  *response = std::move(*report);
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::DoUpdateLeakState(const Caller& caller,
                                                 const drip::v1::UpdateLeakStateRequest& request,
                                                 drip::v1::LeakReport* response) {
  absl::StatusOr<drip::v1::LeakReport> report =
      pipeline_->reports().SetState(request.id(), request.state(), ActorOf(caller, request.actor()),
                                    request.note(), clock_->NowMs());
  if (!report.ok()) return ToGrpcStatus(report.status());
  *response = std::move(*report);
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::DoMitigate(const Caller& caller,
                                          const drip::v1::MitigateRequest& request,
                                          drip::v1::MitigateResponse* response) {
  absl::StatusOr<std::vector<drip::v1::AuditEntry>> entries =
      pipeline_->mitigations().Request(request, ActorOf(caller, request.actor()), clock_->NowMs());
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
                                                        const drip::v1::ListMembersRequest*,
                                                        drip::v1::ListMembersResponse* response) {
  return Serve(context, Role::kViewer, "ListMembers",
               [this, response](const Caller&, const Scope&) { return DoListMembers(response); });
}

grpc::Status QueryServiceImpl::DoListMembers(drip::v1::ListMembersResponse* response) {
  const ClusterMembership* cluster = cluster_.load();
  if (cluster == nullptr) {
    response->set_mode("standalone");
    drip::v1::ClusterMember* self = response->add_members();
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) == 0) self->set_name(name);
    self->set_hosts_connected(hosts_->size());
    self->set_self(true);
    return grpc::Status::OK;
  }
  response->set_mode("etcd");
  response->set_etcd_up(cluster->etcd_up());
  response->set_etcd_endpoint(cluster->etcd_endpoint_in_use());
  const std::vector<ClusterMember> members = cluster->Members();
  std::vector<std::string> names;
  for (const ClusterMember& m : members) names.push_back(m.name);
  std::map<std::string, uint64_t> placed;
  absl::StatusOr<std::vector<drip::v1::HostInfo>> hosts = store_->ListHosts();
  if (!hosts.ok()) return ToGrpcStatus(hosts.status());
  for (const drip::v1::HostInfo& host : *hosts) ++placed[RendezvousOwner(host.host(), names)];
  for (const ClusterMember& m : members) {
    drip::v1::ClusterMember* member = response->add_members();
    member->set_name(m.name);
    member->set_address(m.address);
    member->set_started_ms(m.started_ms);
    member->set_hosts_connected(m.name == cluster->member_name() ? hosts_->size()
                                                                 : m.hosts_connected);
    member->set_self(m.name == cluster->member_name());
    member->set_hosts_placed(placed[m.name]);
  }
  return grpc::Status::OK;
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
  for (auto& a : AskOthers(scope, &AsyncQuery::GetSeries, request)) {
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
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::FindLeakElsewhere(const Scope& scope, const std::string& id,
                                                 const grpc::Status& local,
                                                 MemberAnswer<drip::v1::LeakReport>* found) {
  drip::v1::GetLeakRequest request;
  request.set_id(id);
  std::vector<std::string> silent;
  for (auto& a : AskOthers(scope, &AsyncQuery::GetLeak, request)) {
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
