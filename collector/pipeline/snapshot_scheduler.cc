#include "collector/pipeline/snapshot_scheduler.h"

#include <algorithm>
#include <set>
#include <vector>

#include "common/base/duration.h"
#include "common/base/process_instance.h"
#include "common/daemon/logging.h"
#include "common/snapshot/heap_snapshot_proto.h"
#include "diagnoser/heap_diagnoser.h"
#include "fmt/format.h"

namespace drip::collector {

SnapshotScheduler::SnapshotScheduler(const SnapshotPolicy& policy,
                                     const diagnoser::DiagnoserConfig& diagnoser,
                                     ConnectedHosts* hosts)
    : policy_(policy), diagnoser_config_(diagnoser), hosts_(hosts) {}

void SnapshotScheduler::Tick(int64_t now_ms, const FleetSuspects& suspects) {
  using State = SnapshotAttempt::State;
  if (!policy_.enabled) return;
  auto log = Logger("collector");
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, attempt] : attempts_) {
    if (attempt.state == State::kPending && now_ms > attempt.deadline_ms) {
      attempt.state = State::kFailed;
      attempt.error = "the agent did not answer before the deadline";
      attempt.finished_ms = now_ms;
      by_command_.erase(attempt.command_id);
      counts_.failed++;
      log->warn("snapshot {} of {} on {} timed out", attempt.command_id, key.second, key.first);
    }
  }
  // Suspects per component, fastest growing first; the components in the order of their
  // fastest suspect, so the most urgent leak gets a host's one snapshot slot first.
  std::map<std::string, std::vector<const HostSuspect*>> by_component;
  for (const HostSuspect& s : suspects.hosts) by_component[s.suspect.component].push_back(&s);
  std::vector<std::pair<std::string, std::vector<const HostSuspect*>>> ordered;
  for (auto& [component, list] : by_component) {
    std::sort(list.begin(), list.end(), [](const auto* a, const auto* b) {
      return a->suspect.growth_bytes_per_hour > b->suspect.growth_bytes_per_hour;
    });
    ordered.emplace_back(component, std::move(list));
  }
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return a.second.front()->suspect.growth_bytes_per_hour >
           b.second.front()->suspect.growth_bytes_per_hour;
  });
  // An agent takes one snapshot at a time: a host with one pending gets no other.
  std::set<std::string> busy_hosts;
  for (const auto& [key, attempt] : attempts_) {
    if (attempt.state == State::kPending) busy_hosts.insert(key.first);
  }
  for (auto& [component, list] : ordered) {
    if (auto it = component_started_.find(component);
        it != component_started_.end() && now_ms - it->second < policy_.cooldown.count()) {
      continue;
    }
    uint64_t sent = 0;
    for (const HostSuspect* candidate : list) {
      if (sent >= policy_.hosts_per_component) break;
      const analyzer::Suspect& s = candidate->suspect;
      const std::string& instance = candidate->target_instance();
      const int pid = PidOfInstance(instance);
      if (pid <= 0 || busy_hosts.count(s.host) || !hosts_->IsConnected(s.host)) continue;
      if (s.eta_to_oom_seconds) {
        // What the detector's ETA implies is left: growth × time to OOM.
        const double free_bytes = *s.eta_to_oom_seconds * s.growth_bytes_per_hour / 3600;
        if (free_bytes < static_cast<double>(policy_.min_free_memory_bytes)) continue;
      }
      drip::v1::Command command;
      command.set_id(fmt::format("snapshot-{}-{}", now_ms, next_id_++));
      drip::v1::SnapshotCommand* snap = command.mutable_snapshot();
      snap->set_pid(pid);
      snap->set_component(component);
      snap->set_instance(instance);
      snap->set_duration_seconds(static_cast<uint32_t>(policy_.duration.count() / 1000));
      snap->set_mode(policy_.mode);
      const auto longest = std::max(policy_.duration, policy_.extend_up_to);
      snap->set_extend_up_to_seconds(static_cast<uint32_t>(policy_.extend_up_to.count() / 1000));
      // What the detector measured sizes the window: the agent samples densely enough, and
      // long enough, to see a leak of that rate, and never reads too short a window as
      // "no leak found".
      snap->set_expected_growth_bytes_per_hour(std::max(0.0, s.growth_bytes_per_hour));
      if (!hosts_->SendCommand(s.host, command)) continue;
      SnapshotAttempt attempt;
      attempt.command_id = command.id();
      attempt.instance = instance;
      attempt.requested_ms = now_ms;
      attempt.deadline_ms = now_ms + longest.count() + policy_.grace.count();
      attempt.state = State::kPending;
      const Key key{s.host, component};
      if (auto old = attempts_.find(key); old != attempts_.end()) {
        by_command_.erase(old->second.command_id);
      }
      attempts_[key] = attempt;
      by_command_[command.id()] = key;
      counts_.requested++;
      busy_hosts.insert(s.host);
      ++sent;
      log->info("snapshot {}: {} on {} (pid {}, growing {}) for {} s", command.id(), component,
                s.host, pid, FormatByteRate(s.growth_bytes_per_hour),
                policy_.duration.count() / 1000);
    }
    if (sent > 0) component_started_[component] = now_ms;
  }
}

bool SnapshotScheduler::OnCommandResult(const std::string& host,
                                        const drip::v1::CommandResult& result, int64_t now_ms) {
  auto log = Logger("collector");
  {
    // Only a result this host owes is worth parsing: an agent cannot make the collector
    // diagnose payloads nobody asked for.
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_command_.find(result.command_id());
    if (it == by_command_.end() || it->second.first != host) return false;
  }
  // Parse and diagnose outside the lock: a snapshot can hold thousands of stacks.
  std::string error;
  diagnoser::Diagnosis diagnosis;
  if (!result.ok()) {
    error = result.error().empty() ? "the agent reported a failure" : result.error();
  } else {
    drip::v1::HeapSnapshot proto;
    if (!proto.ParseFromString(result.payload())) {
      error = "the snapshot in the result does not parse";
    } else {
      absl::StatusOr<HeapSnapshot> snapshot =
          ParseHeapSnapshotProto(proto, fmt::format("snapshot from {}", host));
      if (!snapshot.ok()) {
        error = std::string(snapshot.status().message());
      } else {
        diagnosis = diagnoser::HeapDiagnoser(diagnoser_config_).Diagnose(*snapshot);
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_command_.find(result.command_id());
  if (it == by_command_.end() || it->second.first != host) return false;
  SnapshotAttempt& attempt = attempts_[it->second];
  by_command_.erase(it);
  attempt.finished_ms = now_ms;
  if (error.empty()) {
    attempt.state = SnapshotAttempt::State::kDone;
    attempt.diagnosis = std::move(diagnosis);
    counts_.succeeded++;
    log->info("snapshot {} from {}: {}", result.command_id(), host, attempt.diagnosis.summary);
  } else {
    attempt.state = SnapshotAttempt::State::kFailed;
    attempt.error = error;
    counts_.failed++;
    log->warn("snapshot {} from {} failed: {}", result.command_id(), host, error);
  }
  return true;
}

void SnapshotScheduler::Annotate(FleetSuspects* suspects) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (HostSuspect& s : suspects->hosts) {
    auto it = attempts_.find({s.suspect.host, s.suspect.component});
    if (it != attempts_.end()) s.snapshot = it->second;
  }
}

SnapshotScheduler::Counts SnapshotScheduler::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

}  // namespace drip::collector
