#include "collector/pipeline/mitigation_coordinator.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/base/mitigation_signal.h"
#include "common/base/status_macros.h"
#include "common/daemon/logging.h"
#include "common/rpc/report_state.h"
#include "fmt/format.h"

namespace drip::collector {
namespace {

constexpr char kPolicyActor[] = "policy";
constexpr int64_t kHourMs = 3'600'000;

drip::v1::AuditEntry EntryFor(const drip::v1::LeakReport& report,
                              const drip::v1::MitigationRecord& record) {
  drip::v1::AuditEntry e;
  e.set_time_ms(record.finished_ms() != 0 ? record.finished_ms() : record.requested_ms());
  e.set_actor(record.actor());
  e.set_report_id(report.id());
  e.set_component(report.component());
  e.set_host(record.host());
  e.set_action(record.action());
  e.set_target(record.target());
  e.set_dry_run(record.dry_run());
  e.set_outcome(record.outcome());
  e.set_detail(record.detail());
  e.set_command_id(record.command_id());
  return e;
}

}  // namespace

MitigationCoordinator::MitigationCoordinator(const MitigationConfig& config, LeakReportBook* book,
                                             CommandRouter* commands, CollectorMetrics* metrics,
                                             const Clock* clock)
    : config_(config), book_(book), commands_(commands), metrics_(metrics), clock_(clock) {}

void MitigationCoordinator::Count(const std::string& action, const std::string& outcome) {
  if (metrics_ != nullptr) metrics_->Mitigation(action, outcome).Increment();
}

uint64_t MitigationCoordinator::FleetBudgetLocked(int64_t now_ms) {
  while (!recent_actions_ms_.empty() && now_ms - recent_actions_ms_.front() >= kHourMs) {
    recent_actions_ms_.pop_front();
  }
  return recent_actions_ms_.size() >= config_.max_actions_per_hour
             ? 0
             : config_.max_actions_per_hour - recent_actions_ms_.size();
}

std::vector<drip::v1::AuditEntry> MitigationCoordinator::RunLocked(
    const drip::v1::LeakReport& report, const MitigationRequestSpec& spec, const std::string& actor,
    int64_t now_ms) {
  auto log = Logger("collector");
  const MitigationPolicy& policy = config_.For(report.component());
  // In a cluster a report lists hosts streaming to other members (docs/cluster.md, "One
  // owner per leak report"), which this collector reaches through the relay. Without one
  // (a member shutting down) a policy acts on the hosts streaming here, without spending
  // the hourly budget on ones it cannot reach.
  std::set<std::string> via_relay;  // hosts not streaming here that another member has
  {
    std::lock_guard<std::mutex> lock(relay_mu_);
    for (const drip::v1::LeakHost& h : report.hosts()) {
      if (relay_ != nullptr && !commands_->IsConnected(h.host()) && relay_->MayReach(h.host())) {
        via_relay.insert(h.host());
      }
    }
  }
  drip::v1::LeakReport reachable;
  const drip::v1::LeakReport* planned = &report;
  auto unreachable = [&](const drip::v1::LeakHost& h) {
    return h.active() && !commands_->IsConnected(h.host()) && !via_relay.contains(h.host());
  };
  if (spec.automatic && std::any_of(report.hosts().begin(), report.hosts().end(), unreachable)) {
    reachable = report;
    for (drip::v1::LeakHost& h : *reachable.mutable_hosts()) {
      if (unreachable(h)) h.set_active(false);
    }
    planned = &reachable;
  }
  MitigationPlan plan = PlanMitigation(*planned, policy, spec, now_ms, FleetBudgetLocked(now_ms));
  std::vector<drip::v1::AuditEntry> entries;
  for (const MitigationTarget& t : plan.targets) {
    drip::v1::MitigationRecord record;
    // With the report's id, which is unique across the members of a cluster: a member
    // delivering this command tells its agent's answer from its own commands'.
    record.set_command_id(fmt::format("mitigate-{}-{}-{}", report.id(), now_ms, next_id_++));
    record.set_requested_ms(now_ms);
    record.set_host(t.host);
    record.set_action(spec.action);
    record.set_target(t.description);
    record.set_dry_run(spec.dry_run);
    record.set_actor(actor);
    if (spec.action == mitigation_action::kRecommend) {
      // Nothing goes to the host: the report says what on-call should do.
      record.set_outcome("recommended");
      record.set_finished_ms(now_ms);
      record.set_detail(report.recommendation());
    } else {
      drip::v1::Command command;
      command.set_id(record.command_id());
      drip::v1::MitigationCommand* m = command.mutable_mitigation();
      m->set_report_id(report.id());
      m->set_action(spec.action);
      m->set_unit(t.unit);
      m->set_pid(t.pid);
      m->set_signal(spec.action == mitigation_action::kSignalProcess ? spec.signal : 0);
      m->set_dry_run(spec.dry_run);
      m->set_instance(t.instance);
      m->set_component(report.component());
      const int64_t deadline_ms = now_ms + config_.result_timeout.count();
      const bool sent = commands_->Send(t.host, command, deadline_ms, AnswerTo(command.id())).ok();
      // Another member streams the host: it delivers the command, the answer comes back
      // through the router, and meanwhile the command waits here as any other.
      const bool relaying =
          !sent && via_relay.contains(t.host) &&
          commands_->Await(t.host, command.id(), deadline_ms, AnswerTo(command.id())).ok();
      if (relaying) to_relay_.push_back({t.host, command, actor});
      if (!sent && !relaying) {
        record.set_outcome("failed");
        record.set_finished_ms(now_ms);
        record.set_detail("the host's agent is not connected");
      } else {
        record.set_outcome("requested");
        Pending pending;
        pending.report_id = report.id();
        pending.record = record;
        pending.component = report.component();
        pending_[record.command_id()] = std::move(pending);
      }
    }
    if (spec.action != mitigation_action::kRecommend) recent_actions_ms_.push_back(now_ms);
    Count(spec.action, record.outcome());
    log->warn("mitigation {} of {} ({}): {} {} on {}{} by {}: {}", record.command_id(), report.id(),
              report.component(), spec.action, t.description, t.host,
              spec.dry_run ? " (dry-run)" : "", actor, record.outcome());
    absl::StatusOr<drip::v1::AuditEntry> stored =
        book_->RecordMitigation(report.id(), record, EntryFor(report, record), now_ms);
    entries.push_back(stored.ok() ? *stored : EntryFor(report, record));
  }
  if (!spec.automatic) {
    // A refused request is audited too: on-call sees why nothing happened.
    std::vector<drip::v1::AuditEntry> refused;
    for (const SkippedHost& s : plan.skipped) {
      drip::v1::AuditEntry& e = refused.emplace_back();
      e.set_time_ms(now_ms);
      e.set_actor(actor);
      e.set_report_id(report.id());
      e.set_component(report.component());
      e.set_host(s.host);
      e.set_action(spec.action);
      e.set_dry_run(spec.dry_run);
      e.set_outcome("refused");
      e.set_detail(s.reason);
      Count(spec.action, "refused");
      log->warn("mitigation of {} on {} refused: {}", report.id(), s.host, s.reason);
    }
    IgnoreError(book_->Audit(&refused));  // a failed write is logged, counted and retried
    for (auto& e : refused) entries.push_back(std::move(e));
  }
  return entries;
}

void MitigationCoordinator::Restore(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int64_t> recent;
  for (const drip::v1::LeakReport& report : book_->List("all", "")) {
    for (const drip::v1::MitigationRecord& record : report.mitigations()) {
      if (record.action() == mitigation_action::kRecommend) continue;
      if (now_ms - record.requested_ms() < kHourMs) recent.push_back(record.requested_ms());
      if (record.outcome() != "requested" || record.command_id().empty()) continue;
      Pending pending;
      pending.report_id = report.id();
      pending.record = record;
      pending.component = report.component();
      // The agent answers once it is back on a stream, if within the time-out.
      IgnoreError(commands_->Await(record.host(), record.command_id(),
                                   record.requested_ms() + config_.result_timeout.count(),
                                   AnswerTo(record.command_id())));  // ids are unique: always waits
      pending_[record.command_id()] = std::move(pending);
    }
  }
  std::sort(recent.begin(), recent.end());
  recent_actions_ms_.assign(recent.begin(), recent.end());
  if (!recent.empty() || !pending_.empty()) {
    Logger("collector")
        ->info(
            "mitigations restored from the reports: {} in the last hour (of "
            "max_actions_per_hour {}), {} awaiting their agent",
            recent.size(), config_.max_actions_per_hour, pending_.size());
  }
}

void MitigationCoordinator::SetRelay(CommandRelay* relay) {
  std::unique_lock<std::mutex> lock(relay_mu_);
  relay_idle_.wait(lock, [this] { return relay_users_ == 0; });
  relay_ = relay;
}

void MitigationCoordinator::SendRelayed() {
  std::vector<Relayed> relayed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    relayed.swap(to_relay_);
  }
  if (relayed.empty()) return;
  CommandRelay* relay = nullptr;
  {
    std::lock_guard<std::mutex> lock(relay_mu_);
    relay = relay_;
    if (relay != nullptr) ++relay_users_;
  }
  for (Relayed& r : relayed) {
    auto failed = [id = r.command.id()](const absl::Status& why) {
      drip::v1::CommandResult result;
      result.set_command_id(id);
      result.set_ok(false);
      result.set_error(std::string(why.message()));
      return result;
    };
    if (relay == nullptr) {
      // The relay went (the member is leaving) since the command was planned.
      commands_->Deliver(r.host, failed(absl::UnavailableError("the collector is shutting down")));
      continue;
    }
    // The answer is taken as the command's own, whatever id the delivering member names.
    // It goes through the router as a local agent's answer would, to the handler waiting
    // since the command was planned.
    auto answer = [commands = commands_, failed, host = r.host,
                   id = r.command.id()](absl::StatusOr<drip::v1::CommandResult> result) {
      drip::v1::CommandResult answered = result.ok() ? *std::move(result) : failed(result.status());
      answered.set_command_id(id);
      commands->Deliver(host, answered);
    };
    // The relay gives up a little after this collector would time the command out, so
    // that an agent that never answers is audited "timed-out", as it is here.
    relay->Relay(r.host, r.command, r.actor, config_.result_timeout + std::chrono::seconds(30),
                 std::move(answer));
  }
  if (relay != nullptr) {
    std::lock_guard<std::mutex> lock(relay_mu_);
    if (--relay_users_ == 0) relay_idle_.notify_all();
  }
}

void MitigationCoordinator::Tick(int64_t now_ms) {
  RunPolicies(now_ms);
  SendRelayed();
}

void MitigationCoordinator::RunPolicies(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const drip::v1::LeakReport& report : book_->List("", "")) {
    const MitigationPolicy& policy = config_.For(report.component());
    if (!policy.automatic) continue;
    MitigationRequestSpec spec;
    spec.action = policy.action;
    spec.dry_run = policy.dry_run;
    spec.automatic = true;
    spec.signal = policy.signal;
    RunLocked(report, spec, kPolicyActor, now_ms);
  }
}

absl::StatusOr<std::vector<drip::v1::AuditEntry>> MitigationCoordinator::Request(
    const drip::v1::MitigateRequest& request, const std::string& actor, int64_t now_ms) {
  if (request.action() != mitigation_action::kRestartUnit &&
      request.action() != mitigation_action::kSignalProcess &&
      request.action() != mitigation_action::kRecommend) {
    return absl::InvalidArgumentError(fmt::format(
        "action: '{}' is not restart-unit, signal-process or recommend", request.action()));
  }
  absl::StatusOr<drip::v1::LeakReport> report = book_->Get(request.id());
  if (!report.ok()) return report.status();
  if (ReportStateOf(*report) == drip::v1::REPORT_STATE_RESOLVED) {
    return absl::FailedPreconditionError(
        fmt::format("leak report {} is resolved: nothing to mitigate", request.id()));
  }
  const MitigationPolicy& policy = config_.For(report->component());
  MitigationRequestSpec spec;
  spec.action = request.action();
  spec.dry_run = request.dry_run();
  spec.only_host = request.host();
  spec.signal = request.signal() != 0 ? request.signal() : policy.signal;
  if (spec.action == mitigation_action::kSignalProcess &&
      !ParseMitigationSignal(std::to_string(spec.signal)).ok()) {
    return absl::InvalidArgumentError(
        std::string(ParseMitigationSignal(std::to_string(spec.signal)).status().message()));
  }
  std::vector<drip::v1::AuditEntry> entries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries = RunLocked(*report, spec, actor, now_ms);
  }
  SendRelayed();
  return entries;
}

absl::Status MitigationCoordinator::AdmitRelayed(drip::v1::LeakReport report_copy,
                                                 const std::string& host,
                                                 const std::string& command_id,
                                                 const drip::v1::MitigationCommand& command,
                                                 int64_t now_ms) {
  if (command.action() != mitigation_action::kRestartUnit &&
      command.action() != mitigation_action::kSignalProcess &&
      command.action() != mitigation_action::kRecommend) {
    return absl::InvalidArgumentError(fmt::format(
        "action: '{}' is not restart-unit, signal-process or recommend", command.action()));
  }
  drip::v1::LeakReport* report = &report_copy;
  if (report->id() != command.report_id() || report->component() != command.component()) {
    return absl::InvalidArgumentError(fmt::format("leak report {} is of {}, not of {}",
                                                  report->id(), report->component(),
                                                  command.component()));
  }
  // Not FAILED_PRECONDITION, which tells the owner the host streams elsewhere.
  if (ReportStateOf(*report) == drip::v1::REPORT_STATE_RESOLVED) {
    return absl::InvalidArgumentError(
        fmt::format("leak report {} is resolved: nothing to mitigate", command.report_id()));
  }
  if (std::none_of(report->hosts().begin(), report->hosts().end(),
                   [&](const drip::v1::LeakHost& h) { return h.host() == host; })) {
    return absl::InvalidArgumentError(
        fmt::format("{} is not a host of leak report {}", host, command.report_id()));
  }
  // The owner recorded this very command before relaying it; that record is not a
  // previous action on the host.
  auto* records = report->mutable_mitigations();
  records->erase(std::remove_if(records->begin(), records->end(),
                                [&](const drip::v1::MitigationRecord& r) {
                                  return r.command_id() == command_id;
                                }),
                 records->end());
  const MitigationPolicy& policy = config_.For(report->component());
  MitigationRequestSpec spec;
  spec.action = command.action();
  spec.dry_run = command.dry_run();
  spec.only_host = host;
  spec.signal = command.signal() != 0 ? command.signal() : policy.signal;
  std::lock_guard<std::mutex> lock(mu_);
  // What this member delivered of the report within the cool-down counts as the owner's
  // records do: the owner's copy reaches this member late, or (from a member that skips
  // its checks) not at all.
  std::vector<drip::v1::MitigationRecord>& delivered = relayed_records_[command.report_id()];
  std::erase_if(delivered, [&](const drip::v1::MitigationRecord& r) {
    return now_ms - r.requested_ms() >= std::max<int64_t>(policy.cooldown.count(), kHourMs);
  });
  for (const drip::v1::MitigationRecord& r : delivered) *records->Add() = r;
  const MitigationPlan plan =
      PlanMitigation(*report, policy, spec, now_ms, FleetBudgetLocked(now_ms));
  const bool planned = std::any_of(plan.targets.begin(), plan.targets.end(),
                                   [&](const MitigationTarget& t) { return t.host == host; });
  if (!planned) {
    std::string why = "the policy's limits leave it out";
    for (const SkippedHost& s : plan.skipped) {
      if (s.host == host) why = s.reason;
    }
    return absl::ResourceExhaustedError(fmt::format("not delivered: {}", why));
  }
  if (command.action() != mitigation_action::kRecommend) recent_actions_ms_.push_back(now_ms);
  drip::v1::MitigationRecord& record = delivered.emplace_back();
  record.set_command_id(command_id);
  record.set_requested_ms(now_ms);
  record.set_host(host);
  record.set_action(command.action());
  record.set_dry_run(command.dry_run());
  if (command.action() == mitigation_action::kRecommend) record.set_outcome("recommended");
  return absl::OkStatus();
}

CommandRouter::Done MitigationCoordinator::AnswerTo(const std::string& command_id) {
  return [this, command_id](absl::StatusOr<drip::v1::CommandResult> answer) {
    OnAnswer(command_id, std::move(answer));
  };
}

void MitigationCoordinator::OnAnswer(const std::string& command_id,
                                     absl::StatusOr<drip::v1::CommandResult> answer) {
  const int64_t now_ms = clock_->NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(command_id);
  if (it == pending_.end()) return;
  Pending pending = std::move(it->second);
  pending_.erase(it);
  if (!answer.ok()) {
    // The router's Expire: the one time-out of commands sent, relayed and restored alike.
    FinishLocked(
        std::move(pending), "timed-out",
        fmt::format("the agent did not answer within {} s", config_.result_timeout.count() / 1000),
        now_ms);
    return;
  }
  const drip::v1::CommandResult& result = *answer;
  std::string outcome;
  if (result.refused()) {
    outcome = "refused";
  } else if (!result.ok()) {
    outcome = "failed";
  } else {
    outcome = pending.record.dry_run() ? "dry-run" : "succeeded";
  }
  std::string detail = result.ok() ? result.detail() : result.error();
  if (detail.empty()) detail = result.detail();
  FinishLocked(std::move(pending), outcome, detail, now_ms);
}

void MitigationCoordinator::FinishLocked(Pending pending, const std::string& outcome,
                                         const std::string& detail, int64_t now_ms) {
  drip::v1::MitigationRecord& record = pending.record;
  record.set_outcome(outcome);
  record.set_detail(detail);
  record.set_finished_ms(now_ms);
  Count(record.action(), outcome);
  Logger("collector")
      ->warn("mitigation {} of {} on {}: {}{}: {}", record.command_id(), pending.report_id,
             record.host(), outcome, record.dry_run() ? " (dry-run)" : "", detail);
  drip::v1::LeakReport report;
  report.set_id(pending.report_id);
  report.set_component(pending.component);
  absl::StatusOr<drip::v1::AuditEntry> stored =
      book_->RecordMitigation(pending.report_id, record, EntryFor(report, record), now_ms);
  if (!stored.ok()) {
    Logger("collector")
        ->error("recording mitigation {}: {}", record.command_id(),
                std::string(stored.status().message()));
  }
}

}  // namespace drip::collector
