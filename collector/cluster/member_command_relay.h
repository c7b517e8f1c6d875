// MemberCommandRelay: the cluster's CommandRelay (command_relay.h). A command for a host
// that does not stream to this member goes to the member rendezvous placement puts the
// host on (the one its agent streams to once placement has settled), as that member's
// MemberService.RelayCommand, which sends it down the host's stream and answers with the agent's
// result. A member that answers that the host does not stream there (FAILED_PRECONDITION:
// it sent nothing) hands the command to the next member in the host's order of
// preference: in the seconds after a join or a leave the agent is still with the member
// it is leaving, or already with the one it goes to next. Any other failure ends the
// command, as the command may have reached the agent: a mitigation is never sent twice.
// Over TLS this collector's certificate is the client certificate: the other members
// admit it as a member (cluster/member_admission.h, docs/security.md).
//
// Destruction cancels the calls still waiting and waits for their `done`: destroy this
// before whatever `done` calls into. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "collector/cluster/cluster_membership.h"
#include "collector/cluster/member_query_client.h"
#include "collector/collector_metrics.h"
#include "collector/pipeline/command_relay.h"

namespace drip::collector {

class MemberCommandRelay final : public CommandRelay {
 public:
  // Every pointer must outlive the relay; `metrics` may be null (tests).
  MemberCommandRelay(const ClusterMembership* cluster, MemberQueryClient* members,
                     CollectorMetrics* metrics);
  ~MemberCommandRelay() override;

  bool MayReach(const std::string& host) const override;
  void Relay(const std::string& host, const drip::v1::Command& command,
             const std::string& requested_by, std::chrono::milliseconds timeout,
             Done done) override;

 private:
  struct Call;
  struct Relaying;

  // Sends the command to the next member that may hold the host's stream; the last
  // refusal fails it.
  void TryNext(std::shared_ptr<Relaying> relaying);
  void Fail(Relaying& relaying, absl::Status status);
  // A member's answer to call `id`: the command's result, or its refusal, which hands
  // the command to the next member only when the member sent nothing.
  void OnAnswer(uint64_t id, const Call& call, std::shared_ptr<Relaying> relaying,
                const ClusterMember& member, const grpc::Status& status);

  const ClusterMembership* cluster_;
  MemberQueryClient* members_;
  CollectorMetrics* metrics_;
  std::mutex mu_;
  std::condition_variable idle_;
  bool closing_ = false;
  uint64_t next_call_ = 0;
  std::map<uint64_t, std::shared_ptr<Call>> in_flight_;
};

}  // namespace drip::collector
