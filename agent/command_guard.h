// CommandGuard: the agent's last word on every command the collector sends (heap
// snapshots and mitigations), checked before the command reaches the snapshot runner
// or the mitigation executor. A collector that is compromised or misconfigured can
// only make a host do what the host's own operator allowed:
//
//   - the target must be inside the allow-list `commands.allowed_components`: glob
//     patterns over the component the agent itself names for the target process
//     (svc:<unit> for systemd services, proc:<executable> otherwise; a restart-unit
//     command targets svc:<unit>). The collector's own claim of the component is not
//     trusted. "recommend" touches nothing and is always let through.
//   - restart-unit restarts only a system service this agent observed running in its
//     last pass, under its own cgroup outside any user's manager or container (the unit
//     sampler's svc: components), and never one of the units a host cannot do without
//     (kNeverRestarted: systemd's own, logins, ssh, D-Bus, the network, Drip's agent),
//     whatever the allow-list says. The name the collector sends decides nothing by itself.
//   - snapshots are rate-limited: at most `snapshots.max_per_hour` started per rolling
//     hour, whatever the collector asks (each costs the target CPU).
//
// The actions themselves (mitigation.allowed_actions, snapshots.enabled) stay with the
// runner and the executor. Only the stream the agent dialled, to a collector whose
// certificate verified against tls.ca_file, delivers commands at all.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "drip/v1/agent.pb.h"

namespace drip::agent {

struct CommandGuardOptions {
  std::vector<std::string> allowed_components = {"svc:*"};
  uint64_t max_snapshots_per_hour = 6;  // 0: no snapshots at all
  std::string proc_root = "/proc";
  // Whether `component` (svc:<unit>) was one of the system services the agent's last
  // pass sampled from their cgroups. Null: none was (no restart-unit is admitted).
  std::function<bool(std::string_view component)> observed_unit;
  // Monotonic time; tests inject their own.
  std::function<std::chrono::steady_clock::time_point()> now = std::chrono::steady_clock::now;
};

class CommandGuard {
 public:
  explicit CommandGuard(CommandGuardOptions options);

  // OK when `command` may go on to its runner; PERMISSION_DENIED (outside the allow-list)
  // or RESOURCE_EXHAUSTED (snapshot rate) with a message for the collector's audit log
  // and the agent's log. An admitted snapshot counts against the rate.
  absl::Status Admit(const drip::v1::Command& command);

  // The component this agent gives process `pid` now, as the sampler would name it.
  absl::StatusOr<std::string> ComponentOfPid(int pid) const;

 private:
  static absl::Status Unnamed(int pid, const absl::Status& why);
  absl::Status CheckTarget(const std::string& component, const std::string& what) const;
  absl::Status CheckUnit(const std::string& unit) const;
  absl::Status TakeSnapshotSlotLocked();

  const CommandGuardOptions options_;
  std::mutex mu_;
  std::deque<std::chrono::steady_clock::time_point> snapshot_starts_;  // within the last hour
};

// Units restart-unit never touches, as globs over the unit name: without them a host
// cannot be logged into, reached or managed, or Drip itself would stop watching it.
inline constexpr std::string_view kNeverRestarted[] = {
    "systemd-*",
    "init.scope",
    "*getty@*",
    "ssh.service",
    "sshd.service",
    "ssh@*.service",
    "sshd@*.service",
    "dbus.service",
    "dbus-broker.service",
    "polkit.service",
    "user@*.service",
    "user-runtime-dir@*",
    "networking.service",
    "NetworkManager.service",
    "wpa_supplicant.service",
    "auditd.service",
    "emergency.service",
    "rescue.service",
    "drip-agent.service",
};

// fnmatch(3)-style glob: '*' any run of characters, '?' one, no character classes.
bool MatchesGlob(std::string_view pattern, std::string_view text);

}  // namespace drip::agent
