// CommandRelay: how the mitigation coordinator reaches a host that streams to another
// member of the cluster (docs/cluster.md, "Mitigation through the member that streams the
// host"). The report's owner decides, audits and awaits the command; the relay carries it
// to the member holding the host's stream and brings the agent's answer back. The cluster
// layer implements it (cluster/member_command_relay.h); a standalone collector has none.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "drip/v1/agent.pb.h"

namespace drip::collector {

class CommandRelay {
 public:
  using Done = std::function<void(absl::StatusOr<drip::v1::CommandResult>)>;

  virtual ~CommandRelay() = default;

  // Whether some other member may hold `host`'s stream: a host placed on this member
  // that is not streaming here is out of reach, and a policy does not spend its budget on
  // it. Calls back into nothing.
  virtual bool MayReach(const std::string& host) const = 0;

  // Hands `command` for `host` on, with `requested_by` (the actor the owner audited) for
  // the relaying member's log. `done` runs exactly once, on any thread and possibly before
  // Relay returns: with the agent's answer, or with why none came within `timeout`. The
  // caller must therefore hold no lock `done` takes.
  virtual void Relay(const std::string& host, const drip::v1::Command& command,
                     const std::string& requested_by, std::chrono::milliseconds timeout,
                     Done done) = 0;
};

}  // namespace drip::collector
