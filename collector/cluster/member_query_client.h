// MemberQueryClient: how one collector asks the other members of its cluster for their
// part of a fleet-wide query (docs/cluster.md, "One fleet view"), as Thanos' querier asks
// its stores: every member at once, each call with the same deadline, and an answer that
// says which members did not answer instead of waiting for them or failing as a whole.
//
// Calls go to the members' own API (drip.v1.MemberService, cluster/member_service.h), whose
// answer is the member's alone (no call fans out twice), and which admits members only.
// They never carry the caller's credentials: over TLS the collector's own certificate is
// its client certificate, so a member sees a collector, never the person who asked. A
// caller's token handed to every address in etcd would reach whoever can write a member
// record (docs/security.md, "The cluster's trust model").
//
// Channels are kept per address and made once. Thread-safe.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "collector/cluster/cluster_membership.h"
#include "common/rpc/tls_settings.h"
#include "drip/v1/member.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace drip::collector {

// One member's answer to a fan-out call.
template <typename Response>
struct MemberAnswer {
  std::string member;
  std::string address;
  grpc::Status status;
  Response response;
};

class MemberQueryClient {
 public:
  // How long a member has to answer its part; past it the answer goes without it.
  static constexpr std::chrono::milliseconds kDefaultDeadline{5000};

  // `tls` is the collector's own section: its certificate and key are presented to the
  // members, whose certificates must chain to its CA.
  explicit MemberQueryClient(TlsSettings tls,
                             std::chrono::milliseconds deadline = kDefaultDeadline);

  // One method of the async stub, e.g.
  //   &drip::v1::MemberService::Stub::async_interface::ListHosts
  template <typename Request, typename Response>
  using AsyncMethod = void (drip::v1::MemberService::Stub::async_interface::*)(
      grpc::ClientContext*, const Request*, Response*, std::function<void(grpc::Status)>);

  // Sends `request` to every one of `members` at once and returns when all have answered
  // or run out of time, one entry per member in their order. A member whose channel
  // cannot be made answers with that error. The members have the client's deadline, or
  // less when `caller_deadline` (the asking call's own, a margin kept for the merge) is
  // sooner: a partial answer in time beats a complete one too late.
  template <typename Request, typename Response>
  std::vector<MemberAnswer<Response>> AskAll(const std::vector<ClusterMember>& members,
                                             AsyncMethod<Request, Response> method,
                                             const Request& request,
                                             std::chrono::system_clock::time_point caller_deadline =
                                                 std::chrono::system_clock::time_point::max());

  // The stub for `address`, made on first use; null with `error` set when the
  // credentials cannot be built (a certificate file gone). For calls that are not a
  // fan-out part (a relayed command, cluster/member_command_relay.h).
  std::shared_ptr<drip::v1::MemberService::Stub> StubFor(const std::string& address,
                                                         grpc::Status* error);

 private:
  const TlsSettings tls_;
  const std::chrono::milliseconds deadline_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<drip::v1::MemberService::Stub>> stubs_;  // by address
};

template <typename Request, typename Response>
std::vector<MemberAnswer<Response>> MemberQueryClient::AskAll(
    const std::vector<ClusterMember>& members, AsyncMethod<Request, Response> method,
    const Request& request, std::chrono::system_clock::time_point caller_deadline) {
  std::vector<MemberAnswer<Response>> answers(members.size());
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts(members.size());
  std::mutex done_mu;
  std::condition_variable done_cv;
  size_t pending = 0;
  constexpr std::chrono::milliseconds kMergeMargin{250};
  auto deadline = std::chrono::system_clock::now() + deadline_;
  if (caller_deadline != std::chrono::system_clock::time_point::max()) {
    deadline = std::min(deadline, caller_deadline - kMergeMargin);
  }
  for (size_t i = 0; i < members.size(); ++i) {
    answers[i].member = members[i].name;
    answers[i].address = members[i].address;
    std::shared_ptr<drip::v1::MemberService::Stub> stub =
        StubFor(members[i].address, &answers[i].status);
    if (stub == nullptr) continue;
    contexts[i] = std::make_unique<grpc::ClientContext>();
    contexts[i]->set_deadline(deadline);
    {
      std::lock_guard<std::mutex> lock(done_mu);
      ++pending;
    }
    (stub->async()->*method)(contexts[i].get(), &request, &answers[i].response,
                             [&, i](grpc::Status status) {
                               std::lock_guard<std::mutex> lock(done_mu);
                               answers[i].status = std::move(status);
                               if (--pending == 0) done_cv.notify_all();
                             });
  }
  // Every call ends by its deadline at the latest (gRPC finishes it DEADLINE_EXCEEDED),
  // and its callback refers to this frame: wait for all of them.
  std::unique_lock<std::mutex> lock(done_mu);
  done_cv.wait(lock, [&] { return pending == 0; });
  return answers;
}

}  // namespace drip::collector
