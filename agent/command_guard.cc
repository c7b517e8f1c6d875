#include "agent/command_guard.h"

#include <utility>

#include "agent/component_namer.h"
#include "agent/proc_files.h"
#include "common/base/duration.h"
#include "common/base/mitigation_action.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace drip::agent {
namespace {

constexpr std::chrono::hours kRateWindow(1);

}  // namespace

bool MatchesGlob(std::string_view pattern, std::string_view text) {
  // Iterative matching with one backtrack point: linear for patterns with one '*',
  // and never exponential, whatever a config holds.
  size_t p = 0;
  size_t t = 0;
  size_t star = std::string_view::npos;
  size_t star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_t = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

CommandGuard::CommandGuard(CommandGuardOptions options) : options_(std::move(options)) {}

absl::StatusOr<std::string> CommandGuard::ComponentOfPid(int pid) const {
  if (pid <= 0) return absl::InvalidArgumentError(fmt::format("pid {} is not a process", pid));
  std::string cgroup;
  std::string stat;
  const std::string dir = fmt::format("{}/{}", options_.proc_root, pid);
  absl::Status read = ReadProcFile(dir + "/cgroup", &cgroup);
  if (read.ok()) read = ReadProcFile(dir + "/stat", &stat);
  if (!read.ok()) return read;
  absl::StatusOr<ProcStat> parsed = ParseProcStat(stat);
  if (!parsed.ok()) return parsed.status();
  return ComponentNamer(options_.proc_root)
      .ComponentOf(pid, CgroupPathFromFile(cgroup), parsed->comm);
}

absl::Status CommandGuard::Unnamed(int pid, const absl::Status& why) {
  // A pid that names no process now is refused, not waved through: by the time the
  // executor or the snapshotter looks, a new process may hold it, one the allow-list was
  // never asked about.
  return absl::PermissionDeniedError(
      fmt::format("pid {}: {}; a target this agent cannot name is never acted on", pid,
                  std::string(why.message())));
}

absl::Status CommandGuard::CheckTarget(const std::string& component,
                                       const std::string& what) const {
  for (const std::string& pattern : options_.allowed_components) {
    if (MatchesGlob(pattern, component)) return absl::OkStatus();
  }
  return absl::PermissionDeniedError(fmt::format(
      "{} is {}, outside this agent's commands.allowed_components ({})", what, component,
      options_.allowed_components.empty()
          ? std::string("empty: no process may be targeted")
          : fmt::format("{}", fmt::join(options_.allowed_components, ", "))));
}

absl::Status CommandGuard::CheckUnit(const std::string& unit) const {
  for (std::string_view pattern : kNeverRestarted) {
    if (MatchesGlob(pattern, unit)) {
      return absl::PermissionDeniedError(fmt::format(
          "unit {} is one Drip never restarts (systemd's own units, logins, ssh, D-Bus, the "
          "network, the agent itself)",
          unit));
    }
  }
  const std::string component = "svc:" + unit;
  if (!options_.observed_unit || !options_.observed_unit(component)) {
    return absl::PermissionDeniedError(fmt::format(
        "unit {} is not a system service this agent saw running in its last pass (a unit of "
        "its own, outside any user's manager or container); only the service that leaks is "
        "restarted",
        unit));
  }
  return CheckTarget(component, fmt::format("unit {}", unit));
}

absl::Status CommandGuard::TakeSnapshotSlotLocked() {
  const auto now = options_.now();
  while (!snapshot_starts_.empty() && now - snapshot_starts_.front() >= kRateWindow) {
    snapshot_starts_.pop_front();
  }
  if (snapshot_starts_.size() >= options_.max_snapshots_per_hour) {
    if (options_.max_snapshots_per_hour == 0) {
      return absl::ResourceExhaustedError("snapshots.max_per_hour is 0 on this host");
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        snapshot_starts_.front() + kRateWindow - now);
    return absl::ResourceExhaustedError(
        fmt::format("rate limited: {} snapshots started in the last hour "
                    "(snapshots.max_per_hour); the next is allowed in {}",
                    snapshot_starts_.size(), FormatDuration(wait)));
  }
  snapshot_starts_.push_back(now);
  return absl::OkStatus();
}

absl::Status CommandGuard::Admit(const drip::v1::Command& command) {
  if (command.has_mitigation()) {
    const drip::v1::MitigationCommand& m = command.mitigation();
    if (m.action() == mitigation_action::kRecommend) return absl::OkStatus();
    if (m.action() == mitigation_action::kRestartUnit) return CheckUnit(m.unit());
    absl::StatusOr<std::string> component = ComponentOfPid(m.pid());
    if (!component.ok()) return Unnamed(m.pid(), component.status());
    return CheckTarget(*component, fmt::format("pid {}", m.pid()));
  }
  if (command.has_snapshot()) {
    const drip::v1::SnapshotCommand& s = command.snapshot();
    absl::StatusOr<std::string> component = ComponentOfPid(s.pid());
    if (!component.ok()) return Unnamed(s.pid(), component.status());
    if (absl::Status target = CheckTarget(*component, fmt::format("pid {}", s.pid()));
        !target.ok()) {
      return target;
    }
    std::lock_guard<std::mutex> lock(mu_);
    return TakeSnapshotSlotLocked();
  }
  return absl::OkStatus();
}

}  // namespace drip::agent
