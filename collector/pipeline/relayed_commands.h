// RelayedCommands: the commands another member of the cluster had this collector deliver
// to hosts streaming here (MemberService.RelayCommand, docs/cluster.md, "Mitigation through
// the member that streams the host"). The report's owner decides and audits the
// mitigation; this collector only sends it down the host's stream and hands the agent's
// answer back to the waiting call.
//
// Thread-safe: Send and Cancel on query threads, OnCommandResult on storage workers
// (agent sessions), Expire on the pipeline's thread. Each command's `done` runs exactly
// once, outside the lock, unless Cancel took the command first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collector/ingest/connected_hosts.h"
#include "drip/v1/agent.pb.h"

namespace drip::collector {

class RelayedCommands {
 public:
  using Done = std::function<void(absl::StatusOr<drip::v1::CommandResult>)>;

  // `hosts` must outlive this.
  explicit RelayedCommands(ConnectedHosts* hosts) : hosts_(hosts) {}

  // Sends `command` down `host`'s stream and returns the ticket that Cancel takes; `done`
  // gets the agent's answer, or DEADLINE_EXCEEDED once `deadline_ms` has passed at an
  // Expire. Without calling `done`: FAILED_PRECONDITION when the host does not stream
  // here, ALREADY_EXISTS when a command with its id is already waiting.
  absl::StatusOr<uint64_t> Send(const std::string& host, const drip::v1::Command& command,
                                int64_t deadline_ms, Done done);

  // An agent's answer; false when it answers no relayed command (of this host).
  bool OnCommandResult(const std::string& host, const drip::v1::CommandResult& result);

  // The caller of Send that got `ticket` gave up (its call was cancelled): its `done` will
  // not run. False when its answer came first. A ticket is Send's own: no other caller
  // can take back a command by naming its id.
  bool Cancel(const std::string& command_id, uint64_t ticket);

  // Ends the commands whose deadline has passed.
  void Expire(int64_t now_ms);

  size_t size() const;

 private:
  struct Waiting {
    std::string host;
    int64_t deadline_ms = 0;
    uint64_t ticket = 0;
    Done done;
  };

  ConnectedHosts* hosts_;
  mutable std::mutex mu_;
  std::map<std::string, Waiting> waiting_;  // by command id
  uint64_t next_ticket_ = 1;
};

}  // namespace drip::collector
