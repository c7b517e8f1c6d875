#include "collector/cluster/member_command_relay.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/rpc/grpc_conversions.h"
#include "fmt/format.h"

namespace drip::collector {

// One RelayCommand call to one member.
struct MemberCommandRelay::Call {
  grpc::ClientContext context;
  drip::v1::RelayCommandRequest request;
  drip::v1::RelayCommandResponse response;
};

// One command, over the members that may hold its host's stream.
struct MemberCommandRelay::Relaying {
  drip::v1::RelayCommandRequest request;
  std::chrono::system_clock::time_point deadline;
  std::vector<ClusterMember> candidates;
  size_t next = 0;
  std::vector<std::string> refusals;  // "collector NAME at ADDRESS: why"
  Done done;
};

MemberCommandRelay::MemberCommandRelay(const ClusterMembership* cluster, MemberQueryClient* members,
                                       CollectorMetrics* metrics)
    : cluster_(cluster), members_(members), metrics_(metrics) {}

MemberCommandRelay::~MemberCommandRelay() {
  std::unique_lock<std::mutex> lock(mu_);
  closing_ = true;
  for (auto& [id, call] : in_flight_) call->context.TryCancel();
  idle_.wait(lock, [this] { return in_flight_.empty(); });
}

bool MemberCommandRelay::MayReach(const std::string& host) const {
  return cluster_->OwnerElsewhere(host).has_value();
}

void MemberCommandRelay::Relay(const std::string& host, const drip::v1::Command& command,
                               const std::string& requested_by, std::chrono::milliseconds timeout,
                               Done done) {
  auto relaying = std::make_shared<Relaying>();
  relaying->request.set_host(host);
  *relaying->request.mutable_command() = command;
  relaying->request.set_requested_by(requested_by);
  relaying->deadline = std::chrono::system_clock::now() + timeout;
  relaying->candidates = cluster_->OthersByPreference(host);
  relaying->done = std::move(done);
  if (relaying->candidates.empty()) {
    Fail(*relaying, absl::FailedPreconditionError(
                        fmt::format("the agent of {} streams to no collector this one knows of "
                                    "(no other member is live)",
                                    host)));
    return;
  }
  if (metrics_ != nullptr) metrics_->cluster_relays_sent.Increment();
  TryNext(std::move(relaying));
}

void MemberCommandRelay::Fail(Relaying& relaying, absl::Status status) {
  if (metrics_ != nullptr) metrics_->cluster_relays_failed.Increment();
  relaying.done(std::move(status));
}

void MemberCommandRelay::TryNext(std::shared_ptr<Relaying> relaying) {
  const std::string& host = relaying->request.host();
  while (relaying->next < relaying->candidates.size()) {
    const ClusterMember member = relaying->candidates[relaying->next++];
    grpc::Status no_stub;
    std::shared_ptr<drip::v1::MemberService::Stub> stub =
        members_->StubFor(member.address, &no_stub);
    if (stub == nullptr) {
      // Nothing was sent: the next member may hold the stream.
      relaying->refusals.push_back(fmt::format("collector {} at {}: {}", member.name,
                                               member.address, no_stub.error_message()));
      continue;
    }
    auto call = std::make_shared<Call>();
    call->request = relaying->request;
    call->context.set_deadline(relaying->deadline);
    uint64_t id = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closing_) break;
      id = next_call_++;
      in_flight_[id] = call;
    }
    stub->async()->RelayCommand(&call->context, &call->request, &call->response,
                                [this, id, call, relaying, member](grpc::Status status) {
                                  OnAnswer(id, *call, relaying, member, status);
                                });
    return;
  }
  bool closing = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing = closing_;
  }
  if (closing) {
    Fail(*relaying, absl::UnavailableError("the collector is shutting down"));
    return;
  }
  Fail(*relaying,
       absl::FailedPreconditionError(fmt::format("no collector holds the stream of {}: {}", host,
                                                 fmt::join(relaying->refusals, "; "))));
}

void MemberCommandRelay::OnAnswer(uint64_t id, const Call& call, std::shared_ptr<Relaying> relaying,
                                  const ClusterMember& member, const grpc::Status& status) {
  if (status.ok()) {
    relaying->done(call.response.result());
  } else {
    const absl::Status why = FromGrpcStatus(status);
    const std::string refusal = fmt::format("collector {} at {}: {}", member.name, member.address,
                                            std::string(why.message()));
    if (why.code() == absl::StatusCode::kFailedPrecondition) {
      // The member sent nothing: the next one may hold the stream. Registered before
      // this call leaves in_flight_, so destruction waits for it too.
      relaying->refusals.push_back(refusal);
      TryNext(std::move(relaying));
    } else {
      Fail(*relaying, absl::Status(why.code(), refusal));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.erase(id);
  if (in_flight_.empty()) idle_.notify_all();
}

}  // namespace drip::collector
