// MitigationCoordinator: carries out mitigations, the leak pipeline's last stage
// (leak_pipeline.h). Automatic policies are evaluated after every detector pass; dripctl's requests
// arrive through the query API. Either way the planner picks the hosts within the policy's limits,
// the command goes down the host's agent stream, and the request and, later, the agent's outcome
// (or a time-out) are recorded in the report and the audit log. The agent has the last
// word: it executes only actions its own config allows.
//
// In a cluster a report lists hosts streaming to other members: their commands go through
// the CommandRelay (command_relay.h) to the member holding the stream, and the agent's
// answer comes back as any other. Relays are handed on after the mutex is released.
//
// Thread-safe: Tick runs on the pipeline's thread, Request on query threads,
// OnCommandResult on storage workers (agent sessions) and relay callbacks; one mutex,
// taken before the book's.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/collector_metrics.h"
#include "collector/ingest/connected_hosts.h"
#include "collector/pipeline/command_relay.h"
#include "collector/pipeline/leak_report_book.h"
#include "collector/pipeline/mitigation_planner.h"
#include "collector/pipeline/mitigation_policy.h"
#include "drip/v1/agent.pb.h"
#include "drip/v1/query.pb.h"

namespace drip::collector {

class MitigationCoordinator {
 public:
  // Every pointer must outlive the coordinator; `metrics` may be null (tests).
  MitigationCoordinator(const MitigationConfig& config, LeakReportBook* book, ConnectedHosts* hosts,
                        CollectorMetrics* metrics);

  // After a restart, from the reports the book loaded (every mitigation is recorded there
  // as it is requested): the actions of the last hour count against max_actions_per_hour
  // again, and commands still awaiting their agent's answer are awaited again, so that a
  // collector that crash-loops neither exceeds its budget nor audits a signal the agent
  // really sent as timed out. Call once, before the first Tick.
  void Restore(int64_t now_ms);

  // Runs automatic policies over unresolved reports and times out unanswered commands.
  void Tick(int64_t now_ms);

  // dripctl mitigate: one audit entry per host acted on or refused. NOT_FOUND for an
  // unknown report, FAILED_PRECONDITION for a resolved one, INVALID_ARGUMENT for an
  // unknown action or signal.
  absl::StatusOr<std::vector<drip::v1::AuditEntry>> Request(
      const drip::v1::MitigateRequest& request, const std::string& actor, int64_t now_ms);

  // A mitigation another member (the report's owner) asks this collector to deliver to
  // `host`, which streams here (MemberService.RelayCommand checks that first). Judged as
  // this collector would judge its own request, on its copy of the report: a member that
  // skipped its checks, or a member certificate that is not the owner's, cannot act beyond
  // this collector's policy and budget. OK spends one action of the hourly budget (none for
  // recommend). INVALID_ARGUMENT: the command does not match the report (component, host, a
  // resolved report) or names no action; RESOURCE_EXHAUSTED: the policy's limits or the hourly
  // budget, with the planner's reason.
  // `report` is this member's copy (LeakPipeline::KnownReport).
  absl::Status AdmitRelayed(drip::v1::LeakReport report, const std::string& host,
                            const std::string& command_id,
                            const drip::v1::MitigationCommand& command, int64_t now_ms);

  // An agent's answer; false when the command is not a pending mitigation.
  bool OnCommandResult(const std::string& host, const drip::v1::CommandResult& result,
                       int64_t now_ms);

  // In a cluster: how commands reach hosts streaming to other members; relayed answers go
  // to `on_result` (the pipeline's OnCommandResult, which knows the time). Null `relay`
  // (shutdown) stops relaying; it returns once no call to the old relay is in progress,
  // but answers of calls in flight still reach `on_result` until the relay is destroyed.
  void SetRelay(
      CommandRelay* relay,
      std::function<void(const std::string& host, const drip::v1::CommandResult&)> on_result);

 private:
  struct Relayed {
    std::string host;
    drip::v1::Command command;
    std::string actor;
  };
  struct Pending {
    std::string report_id;
    drip::v1::MitigationRecord record;
    std::string component;
    int64_t deadline_ms = 0;
  };

  std::vector<drip::v1::AuditEntry> RunLocked(const drip::v1::LeakReport& report,
                                              const MitigationRequestSpec& spec,
                                              const std::string& actor, int64_t now_ms);
  uint64_t FleetBudgetLocked(int64_t now_ms);
  void FinishLocked(Pending pending, const std::string& outcome, const std::string& detail,
                    int64_t now_ms);
  void Count(const std::string& action, const std::string& outcome);
  // Hands on the commands RunLocked left for the relay; called without mu_.
  void SendRelayed(int64_t now_ms);
  // Tick without handing on what it left for the relay.
  void ExpireAndRunPolicies(int64_t now_ms);

  const MitigationConfig config_;
  LeakReportBook* book_;
  ConnectedHosts* hosts_;
  CollectorMetrics* metrics_;
  std::mutex mu_;
  std::map<std::string, Pending> pending_;  // by command id
  std::deque<int64_t> recent_actions_ms_;   // for max_actions_per_hour
  // The relayed mitigations this member admitted, by report id, within the cool-down (or
  // the hour): AdmitRelayed adds them to its copy of the report.
  std::map<std::string, std::vector<drip::v1::MitigationRecord>> relayed_records_;
  uint64_t next_id_ = 1;
  std::vector<Relayed> to_relay_;  // guarded by mu_
  // The relay, where its answers go, and the SendRelayed calls using them now (SetRelay
  // waits for none). Taken alone or after mu_; held around MayReach, never around Relay.
  std::mutex relay_mu_;
  std::condition_variable relay_idle_;
  int relay_users_ = 0;
  CommandRelay* relay_ = nullptr;
  std::function<void(const std::string&, const drip::v1::CommandResult&)> on_relayed_result_;
};

}  // namespace drip::collector
