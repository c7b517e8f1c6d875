// CommandRouter: the commands this collector sends down agents' streams, and where each
// answer goes (docs/design.md, "Following one batch, and one command"). Whoever sends a command —
// the snapshot scheduler, the mitigation coordinator, the member API delivering another
// member's mitigation — registers a handler under the command's id; an agent session hands
// every CommandResult here, and the result reaches that handler and no other stage. A
// result is taken only from the host the command went to, and only once: an agent cannot
// make the collector parse or record answers nobody asked for.
//
// Thread-safe: Send, Await and Cancel on any thread, Deliver on ingest workers (agent
// sessions), Expire on the leak pipeline's thread. Each handler runs exactly once, outside
// the lock (with the answer, or DEADLINE_EXCEEDED at an Expire past its deadline), unless
// Cancel took the command first. A handler may therefore take locks its sender holds
// around Send.
//
// Lifetime: a sender outlives its commands' handlers being called, that is, the sessions
// and the pipeline's Expire: the collector stops them before it destroys the senders.
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

class CommandRouter {
 public:
  using Done = std::function<void(absl::StatusOr<drip::v1::CommandResult>)>;

  // `hosts` must outlive the router.
  explicit CommandRouter(ConnectedHosts* hosts) : hosts_(hosts) {}

  CommandRouter(const CommandRouter&) = delete;
  CommandRouter& operator=(const CommandRouter&) = delete;

  // Whether `host` streams here now: a command sent to it has a way down.
  bool IsConnected(const std::string& host) const { return hosts_->IsConnected(host); }

  // Sends `command` down `host`'s stream and returns the ticket that Cancel takes; `done`
  // gets the agent's answer, or DEADLINE_EXCEEDED at the first Expire at or past
  // `deadline_ms`. Without calling `done`: FAILED_PRECONDITION when the host does not
  // stream here, ALREADY_EXISTS when a command with its id is already waiting.
  absl::StatusOr<uint64_t> Send(const std::string& host, const drip::v1::Command& command,
                                int64_t deadline_ms, Done done);

  // Waits for the answer to a command sent before this collector restarted (its agent
  // answers once it is back); as Send, without sending. ALREADY_EXISTS as Send.
  absl::StatusOr<uint64_t> Await(const std::string& host, const std::string& command_id,
                                 int64_t deadline_ms, Done done);

  // An agent's answer, from the session of `host`; false when no command of that host
  // waits for it (never sent, already answered, expired or cancelled).
  bool Deliver(const std::string& host, const drip::v1::CommandResult& result);

  // The sender that got `ticket` gave up (its call was cancelled): its `done` will not
  // run. False when the answer came first. A ticket is Send's own: no other caller can
  // take back a command by naming its id.
  bool Cancel(const std::string& command_id, uint64_t ticket);

  // Ends the commands whose deadline has passed.
  void Expire(int64_t now_ms);

  // Commands waiting for their answer.
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
