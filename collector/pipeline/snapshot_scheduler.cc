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
                                     CommandRouter* commands, WorkerPool* diagnoses,
                                     const Clock* clock)
    : policy_(policy),
      diagnoser_config_(diagnoser),
      commands_(commands),
      diagnoses_(diagnoses),
      clock_(clock) {}

void SnapshotScheduler::Tick(int64_t now_ms, const FleetSuspects& suspects) {
  using State = SnapshotAttempt::State;
  if (!policy_.enabled) return;
  auto log = Logger("collector");
  std::lock_guard<std::mutex> lock(mu_);
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
  for (auto& [key, attempt] : attempts_) {
    if (attempt.state == State::kPending) busy_hosts.insert(key.first);
    // The report book has kept it long since (it looks every pass); memory is for the
    // snapshots still to come.
    const int64_t keep_ms = std::max<int64_t>(policy_.cooldown.count(), 10 * 60'000);
    if (attempt.snapshot != nullptr && now_ms - attempt.finished_ms >= keep_ms) {
      attempt.snapshot.reset();
    }
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
      if (pid <= 0 || busy_hosts.count(s.host) || !commands_->IsConnected(s.host)) continue;
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
      const Key key{s.host, component};
      const int64_t deadline_ms = now_ms + longest.count() + policy_.grace.count();
      // An answer that comes at once waits on mu_, held here until the attempt is stored.
      absl::StatusOr<uint64_t> sent_command = commands_->Send(
          s.host, command, deadline_ms,
          [this, key, id = command.id()](absl::StatusOr<drip::v1::CommandResult> answer) {
            OnAnswer(key, id, std::move(answer));
          });
      if (!sent_command.ok()) continue;
      SnapshotAttempt attempt;
      attempt.command_id = command.id();
      attempt.instance = instance;
      attempt.requested_ms = now_ms;
      attempt.deadline_ms = deadline_ms;
      attempt.state = State::kPending;
      attempts_[key] = attempt;
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

void SnapshotScheduler::OnAnswer(const Key& key, const std::string& command_id,
                                 absl::StatusOr<drip::v1::CommandResult> answer) {
  if (!answer.ok()) {
    Finish(key, command_id,
           answer.status().code() == absl::StatusCode::kDeadlineExceeded
               ? std::string("the agent did not answer before the deadline")
               : std::string(answer.status().message()),
           {});
    return;
  }
  if (!answer->ok()) {
    Finish(key, command_id,
           answer->error().empty() ? "the agent reported a failure" : answer->error(), {});
    return;
  }
  // A snapshot can hold thousands of stacks: an ingest thread must not diagnose it while
  // the agents behind it wait for their acks.
  const bool queued = diagnoses_->Submit(
      [this, key, command_id, result = *std::move(answer)] { Diagnose(key, command_id, result); });
  if (!queued) {
    Finish(key, command_id,
           diagnoses_->stopping()
               ? std::string("the collector is shutting down")
               : fmt::format("{} snapshots already wait for diagnosis; the component's next round "
                             "asks again",
                             diagnoses_->max_queued()),
           {});
  }
}

void SnapshotScheduler::Diagnose(const Key& key, const std::string& command_id,
                                 const drip::v1::CommandResult& result) {
  drip::v1::HeapSnapshot proto;
  if (!proto.ParseFromString(result.payload())) {
    Finish(key, command_id, "the snapshot in the result does not parse", {});
    return;
  }
  absl::StatusOr<HeapSnapshot> snapshot =
      ParseHeapSnapshotProto(proto, fmt::format("snapshot from {}", key.first));
  if (!snapshot.ok()) {
    Finish(key, command_id, std::string(snapshot.status().message()), {});
    return;
  }
  Finish(key, command_id, "", diagnoser::HeapDiagnoser(diagnoser_config_).Diagnose(*snapshot),
         std::make_shared<const std::string>(result.payload()));
}

void SnapshotScheduler::Finish(const Key& key, const std::string& command_id, std::string error,
                               diagnoser::Diagnosis diagnosis,
                               std::shared_ptr<const std::string> snapshot) {
  auto log = Logger("collector");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = attempts_.find(key);
  if (it == attempts_.end() || it->second.command_id != command_id ||
      it->second.state != SnapshotAttempt::State::kPending) {
    return;
  }
  SnapshotAttempt& attempt = it->second;
  attempt.finished_ms = clock_->NowMs();
  if (error.empty()) {
    attempt.state = SnapshotAttempt::State::kDone;
    attempt.diagnosis = std::move(diagnosis);
    attempt.snapshot = std::move(snapshot);
    counts_.succeeded++;
    log->info("snapshot {} from {}: {}", command_id, key.first, attempt.diagnosis.summary);
  } else {
    attempt.state = SnapshotAttempt::State::kFailed;
    attempt.error = std::move(error);
    counts_.failed++;
    log->warn("snapshot {} of {} on {} failed: {}", command_id, key.second, key.first,
              attempt.error);
  }
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
