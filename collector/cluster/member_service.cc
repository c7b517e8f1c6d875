#include "collector/cluster/member_service.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "collector/access/peer_credentials.h"
#include "collector/cluster/member_admission.h"
#include "collector/cluster/rendezvous.h"
#include "collector/query/unary_on_pool.h"
#include "common/base/status_macros.h"
#include "common/daemon/listen_address.h"
#include "common/daemon/logging.h"
#include "common/rpc/grpc_conversions.h"
#include "fmt/format.h"

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

// A RelayCommand call whose command waits for its agent, finished once: by the agent's
// answer (through the command router, whose Expire ends it too), or by the caller giving up
// first, which takes the command back with the ticket only this call holds.
class RelayReactor final : public grpc::ServerUnaryReactor {
 public:
  RelayReactor(CommandRouter* commands, std::string command_id,
               drip::v1::RelayCommandResponse* response)
      : commands_(commands), command_id_(std::move(command_id)), response_(response) {}

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
    if (ticket == 0 || !commands_->Cancel(command_id_, ticket)) return false;
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the relaying call was cancelled"));
    return true;
  }

  void OnCancel() override { (void)TakeBack(); }
  void OnDone() override { delete this; }

 private:
  CommandRouter* commands_;
  const std::string command_id_;
  drip::v1::RelayCommandResponse* response_;
  std::atomic<uint64_t> ticket_{0};
};

grpc::ServerUnaryReactor* Refuse(grpc::CallbackServerContext* context, grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

}  // namespace

MemberServiceImpl::MemberServiceImpl(const AccessPolicy* access, QueryServiceImpl* local,
                                     CommandRouter* commands, ReportDesk* reports,
                                     ReplicaWriter* replicas, CollectorMetrics* metrics,
                                     const Clock* clock)
    : access_(access),
      local_(local),
      commands_(commands),
      reports_(reports),
      replicas_(replicas),
      metrics_(metrics),
      clock_(clock) {}

MemberServiceImpl::~MemberServiceImpl() {
  readers_.Stop();
  replica_writers_.Stop();
}

absl::StatusOr<Caller> MemberServiceImpl::Admit(const grpc::CallbackServerContext& context,
                                                const ClusterMembership* cluster,
                                                std::string_view method) {
  // Credentials first, even on a collector outside any cluster: whoever knocks without
  // them is counted as on any other collector.
  CallerCredentials credentials = CallerCredentialsOf(context);
  credentials.certificate_serves = PeerCertificateServes(context);
  absl::StatusOr<Caller> caller = AdmitMember(
      *access_, credentials, cluster == nullptr ? std::vector<ClusterMember>() : cluster->Members(),
      cluster == nullptr ? std::string() : cluster->member_name());
  if (!caller.ok()) {
    metrics_->QueryDenied(fmt::format("{}{}", kMemberMethodPrefix, method), caller.status().code())
        .Increment();
    Logger("collector")
        ->warn("member call {} from {} refused: {}", method, context.peer(),
               std::string(caller.status().message()));
    return caller;
  }
  if (cluster == nullptr) {
    return absl::FailedPreconditionError("this collector is not a member of a cluster");
  }
  return caller;
}

template <typename Work>
grpc::ServerUnaryReactor* MemberServiceImpl::Serve(grpc::CallbackServerContext* context,
                                                   std::string_view method, Work work) {
  absl::StatusOr<Caller> caller = Admit(*context, cluster_.load(), method);
  if (!caller.ok()) return Refuse(context, ToGrpcStatus(caller.status()));
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  FinishOnPool(readers_, reactor, metrics_->queries_shed, std::move(work));
  return reactor;
}

grpc::ServerUnaryReactor* MemberServiceImpl::ListHosts(grpc::CallbackServerContext* context,
                                                       const drip::v1::ListHostsRequest*,
                                                       drip::v1::ListHostsResponse* response) {
  return Serve(context, "ListHosts", [this, response] { return local_->DoListHosts(response); });
}

grpc::ServerUnaryReactor* MemberServiceImpl::GetSeries(grpc::CallbackServerContext* context,
                                                       const drip::v1::GetSeriesRequest* request,
                                                       drip::v1::GetSeriesResponse* response) {
  return Serve(context, "GetSeries",
               [this, request, response] { return local_->DoGetSeries(*request, response); });
}

grpc::ServerUnaryReactor* MemberServiceImpl::ListSuspects(
    grpc::CallbackServerContext* context, const drip::v1::ListSuspectsRequest* request,
    drip::v1::ListSuspectsResponse* response) {
  return Serve(context, "ListSuspects",
               [this, request, response] { return local_->DoListSuspects(*request, response); });
}

grpc::ServerUnaryReactor* MemberServiceImpl::ListLeaks(grpc::CallbackServerContext* context,
                                                       const drip::v1::ListLeaksRequest* request,
                                                       drip::v1::ListLeaksResponse* response) {
  return Serve(context, "ListLeaks",
               [this, request, response] { return local_->DoListLeaks(*request, response); });
}

grpc::ServerUnaryReactor* MemberServiceImpl::GetLeak(grpc::CallbackServerContext* context,
                                                     const drip::v1::GetLeakRequest* request,
                                                     drip::v1::LeakReport* response) {
  return Serve(context, "GetLeak",
               [this, request, response] { return local_->DoGetLeak(*request, response); });
}

grpc::ServerUnaryReactor* MemberServiceImpl::ListAudit(grpc::CallbackServerContext* context,
                                                       const drip::v1::ListAuditRequest* request,
                                                       drip::v1::ListAuditResponse* response) {
  return Serve(context, "ListAudit",
               [this, request, response] { return local_->DoListAudit(*request, response); });
}

grpc::ServerUnaryReactor* MemberServiceImpl::Replicate(grpc::CallbackServerContext* context,
                                                       const drip::v1::ReplicateRequest* request,
                                                       drip::v1::ReplicateResponse* response) {
  const ClusterMembership* cluster = cluster_.load();
  absl::StatusOr<Caller> caller = Admit(*context, cluster, "Replicate");
  if (!caller.ok()) return Refuse(context, ToGrpcStatus(caller.status()));
  response->set_member(cluster->member_name());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  FinishOnPool(replica_writers_, reactor, metrics_->queries_shed, [this, request, response] {
    absl::StatusOr<ReplicaWrite> written = replicas_->Write(request->host(), request->batch());
    if (!written.ok()) return ToGrpcStatus(written.status());
    response->set_stored(written->stored);
    response->set_acked_sequence(written->acked_sequence);
    return grpc::Status::OK;
  });
  return reactor;
}

grpc::ServerUnaryReactor* MemberServiceImpl::CountHostSamples(
    grpc::CallbackServerContext* context, const drip::v1::CountHostSamplesRequest* request,
    drip::v1::CountHostSamplesResponse* response) {
  const ClusterMembership* cluster = cluster_.load();
  absl::StatusOr<Caller> caller = Admit(*context, cluster, "CountHostSamples");
  if (!caller.ok()) return Refuse(context, ToGrpcStatus(caller.status()));
  // A window under a minute would make the answer as large as the samples themselves.
  if (request->host().empty() || request->window_ms() < 60 * 1000) {
    return Refuse(context, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                        "host and a window_ms of at least 60000 are required"));
  }
  response->set_member(cluster->member_name());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  // Reads, on the readers like the other reads, not on the writers replication waits for.
  FinishOnPool(readers_, reactor, metrics_->queries_shed, [this, request, response] {
    absl::StatusOr<std::map<int64_t, uint64_t>> counts =
        replicas_->Count(request->host(), request->since_ms(), request->window_ms());
    if (!counts.ok()) return ToGrpcStatus(counts.status());
    response->set_window_ms(request->window_ms());
    for (const auto& [start_ms, samples] : *counts) {
      drip::v1::CountHostSamplesResponse::Window* window = response->add_windows();
      window->set_start_ms(start_ms);
      window->set_samples(samples);
    }
    return grpc::Status::OK;
  });
  return reactor;
}

grpc::ServerUnaryReactor* MemberServiceImpl::RepairHost(grpc::CallbackServerContext* context,
                                                        const drip::v1::RepairHostRequest* request,
                                                        drip::v1::RepairHostResponse* response) {
  const ClusterMembership* cluster = cluster_.load();
  absl::StatusOr<Caller> caller = Admit(*context, cluster, "RepairHost");
  if (!caller.ok()) return Refuse(context, ToGrpcStatus(caller.status()));
  response->set_member(cluster->member_name());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  FinishOnPool(replica_writers_, reactor, metrics_->queries_shed, [this, request, response] {
    absl::StatusOr<uint64_t> stored =
        replicas_->Repair(request->host(), request->batch(), request->last());
    if (!stored.ok()) return ToGrpcStatus(stored.status());
    response->set_stored(*stored);
    return grpc::Status::OK;
  });
  return reactor;
}

grpc::ServerUnaryReactor* MemberServiceImpl::RelayCommand(
    grpc::CallbackServerContext* context, const drip::v1::RelayCommandRequest* request,
    drip::v1::RelayCommandResponse* response) {
  const ClusterMembership* cluster = cluster_.load();
  absl::StatusOr<Caller> caller = Admit(*context, cluster, "RelayCommand");
  if (!caller.ok()) return Refuse(context, ToGrpcStatus(caller.status()));
  const drip::v1::Command& command = request->command();
  if (request->host().empty() || command.id().empty() || !command.has_mitigation()) {
    return Refuse(context, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                        "host, command.id and command.mitigation are required: "
                                        "only mitigations are relayed"));
  }
  const drip::v1::MitigationCommand& m = command.mitigation();
  const int64_t now_ms = clock_->NowMs();
  const std::string requested_by = ClaimedRequester(request->requested_by());
  if (absl::Status admitted =
          AdmitRelay(*context, *cluster, *caller, request->host(), command, now_ms);
      !admitted.ok()) {
    metrics_->cluster_relays_refused.Increment();
    Logger("collector")
        ->warn("relay of {} ({} of report {}) to {} from {} (says it acts for {}) refused: {}",
               command.id(), m.action(), m.report_id(), request->host(), caller->Describe(),
               requested_by, std::string(admitted.message()));
    return Refuse(context, ToGrpcStatus(admitted));
  }
  response->set_member(cluster->member_name());
  const auto wait = std::min<std::chrono::system_clock::duration>(
      context->deadline() - std::chrono::system_clock::now(), kMaxRelayWait);
  const int64_t deadline_ms =
      now_ms + std::chrono::duration_cast<std::chrono::milliseconds>(wait).count();
  auto* reactor = new RelayReactor(commands_, command.id(), response);
  absl::StatusOr<uint64_t> ticket =
      commands_->Send(request->host(), command, deadline_ms,
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
  IgnoreError(reports_->Audit(&delivered));  // a failed write is logged and counted
  return reactor;
}

absl::Status MemberServiceImpl::AdmitRelay(const grpc::CallbackServerContext& context,
                                           const ClusterMembership& cluster, const Caller& caller,
                                           const std::string& host,
                                           const drip::v1::Command& command, int64_t now_ms) {
  const drip::v1::MitigationCommand& m = command.mitigation();
  // First, as CommandRouter::Send says it: the owner asks the next member in the host's
  // order on this answer, and only on this one (any other refusal ends the mitigation).
  if (!commands_->IsConnected(host)) {
    return absl::FailedPreconditionError(fmt::format("host {} does not stream here", host));
  }
  std::vector<std::string> names;
  std::optional<ClusterMember> owner;
  const std::vector<ClusterMember> members = cluster.Members();
  for (const ClusterMember& member : members) names.push_back(member.name);
  const std::string owner_name = RendezvousOwner(m.component(), names);
  for (const ClusterMember& member : members) {
    if (member.name == owner_name) owner = member;
  }
  if (!owner.has_value() || owner->name == cluster.member_name()) {
    return absl::PermissionDeniedError(
        fmt::format("{} is owned by {} among the live members, not by a member that relays",
                    m.component(), owner_name.empty() ? "no member" : owner_name));
  }
  // Over TLS the caller is known by its certificate: it must be the owner's, whose names
  // include the host the owner advertises (docs/cluster.md). A plaintext cluster has no
  // identity to check.
  if (caller.method == "certificate") {
    const CallerCredentials credentials = CallerCredentialsOf(context);
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
  return reports_->AdmitRelayedMitigation(host, command.id(), m, now_ms);
}

}  // namespace drip::collector
