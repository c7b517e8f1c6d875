#include "collector/cluster/member_command_relay.h"

#include <optional>
#include <utility>

#include "common/rpc/grpc_conversions.h"
#include "fmt/format.h"

namespace drip::collector {

struct MemberCommandRelay::Call {
  grpc::ClientContext context;
  drip::v1::RelayCommandRequest request;
  drip::v1::RelayCommandResponse response;
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
  auto failed = [&](absl::Status status) {
    if (metrics_ != nullptr) metrics_->cluster_relays_failed.Increment();
    done(std::move(status));
  };
  std::optional<ClusterMember> member = cluster_->OwnerElsewhere(host);
  if (!member.has_value()) {
    // Placement puts the host here (or this member is not in the list it read): no other
    // member would have its stream.
    failed(absl::FailedPreconditionError(
        fmt::format("the agent of {} streams to no collector this one knows of", host)));
    return;
  }
  grpc::Status no_stub;
  std::shared_ptr<drip::v1::QueryService::Stub> stub = members_->StubFor(member->address, &no_stub);
  if (stub == nullptr) {
    failed(FromGrpcStatus(no_stub));
    return;
  }
  auto call = std::make_shared<Call>();
  call->request.set_host(host);
  *call->request.mutable_command() = command;
  call->request.set_requested_by(requested_by);
  call->context.set_deadline(std::chrono::system_clock::now() + timeout);
  uint64_t id = 0;
  bool closing = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing = closing_;
    id = next_call_++;
    if (!closing) in_flight_[id] = call;
  }
  if (closing) {
    failed(absl::UnavailableError("the collector is shutting down"));
    return;
  }
  if (metrics_ != nullptr) metrics_->cluster_relays_sent.Increment();
  stub->async()->RelayCommand(
      &call->context, &call->request, &call->response,
      [this, id, call, name = member->name, address = member->address,
       done = std::move(done)](grpc::Status status) {
        if (status.ok()) {
          done(call->response.result());
        } else {
          if (metrics_ != nullptr) metrics_->cluster_relays_failed.Increment();
          const absl::Status why = FromGrpcStatus(status);
          done(absl::Status(why.code(), fmt::format("collector {} at {}: {}", name, address,
                                                    std::string(why.message()))));
        }
        std::lock_guard<std::mutex> lock(mu_);
        in_flight_.erase(id);
        if (in_flight_.empty()) idle_.notify_all();
      });
}

}  // namespace drip::collector
