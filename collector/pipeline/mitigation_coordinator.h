// MitigationCoordinator: carries out mitigations, the leak pipeline's last stage
// (leak_pipeline.h). Automatic policies are evaluated after every detector pass; dripctl's requests
// arrive through the query API. Either way the planner picks the hosts within the policy's limits,
// the command goes down the host's agent stream, and the request and, later, the agent's outcome
// (or a time-out) are recorded in the report and the audit log. The agent has the last
// word: it executes only actions its own config allows.
//
// Every command waits in the command router (ingest/command_router.h) for its answer,
// which the router hands to this coordinator alone; the router's Expire is the one
// time-out ("timed-out"). In a cluster a report lists hosts streaming to other members:
// their commands go through the CommandRelay (command_relay.h) to the member holding the
// stream, and the agent's answer comes back through the router as any other. Relays are
// handed on after the mutex is released.
//
// Thread-safe: Tick runs on the pipeline's thread, Request on query threads, answers on
// ingest workers, relay callbacks and the pipeline's Expire; one mutex, taken before the
// book's.
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
#include "collector/ingest/command_router.h"
#include "collector/pipeline/command_relay.h"
#include "collector/pipeline/leak_report_book.h"
#include "collector/pipeline/mitigation_planner.h"
#include "collector/pipeline/mitigation_policy.h"
#include "common/base/clock.h"
#include "drip/v1/agent.pb.h"
#include "drip/v1/query.pb.h"

namespace drip::collector {

class MitigationCoordinator {
 public:
  // Every pointer must outlive the coordinator; `metrics` may be null (tests). `clock`
  // stamps when answers arrive.
  MitigationCoordinator(const MitigationConfig& config, LeakReportBook* book,
                        CommandRouter* commands, CollectorMetrics* metrics, const Clock* clock);

  // After a restart, from the reports the book loaded (every mitigation is recorded there
  // as it is requested): the actions of the last hour count against max_actions_per_hour
  // again, and commands still awaiting their agent's answer are awaited again, so that a
  // collector that crash-loops neither exceeds its budget nor audits a signal the agent
  // really sent as timed out. Call once, before the first Tick.
  void Restore(int64_t now_ms);

  // Runs automatic policies over unresolved reports and hands on what goes to the relay.
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

  // In a cluster: how commands reach hosts streaming to other members. Null `relay`
  // (shutdown) stops relaying; it returns once no call to the old relay is in progress,
  // but answers of calls in flight still reach the router until the relay is destroyed.
  void SetRelay(CommandRelay* relay);

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
  };

  std::vector<drip::v1::AuditEntry> RunLocked(const drip::v1::LeakReport& report,
                                              const MitigationRequestSpec& spec,
                                              const std::string& actor, int64_t now_ms);
  uint64_t FleetBudgetLocked(int64_t now_ms);
  void FinishLocked(Pending pending, const std::string& outcome, const std::string& detail,
                    int64_t now_ms);
  void Count(const std::string& action, const std::string& outcome);
  // Hands on the commands RunLocked left for the relay; called without mu_.
  void SendRelayed();
  // Tick without handing on what it left for the relay.
  void RunPolicies(int64_t now_ms);
  // The router's handler for the command `command_id`, and what it does.
  CommandRouter::Done AnswerTo(const std::string& command_id);
  void OnAnswer(const std::string& command_id, absl::StatusOr<drip::v1::CommandResult> answer);

  const MitigationConfig config_;
  LeakReportBook* book_;
  CommandRouter* commands_;
  CollectorMetrics* metrics_;
  const Clock* clock_;
  std::mutex mu_;
  std::map<std::string, Pending> pending_;  // by command id
  std::deque<int64_t> recent_actions_ms_;   // for max_actions_per_hour
  // The relayed mitigations this member admitted, by report id, within the cool-down (or
  // the hour): AdmitRelayed adds them to its copy of the report.
  std::map<std::string, std::vector<drip::v1::MitigationRecord>> relayed_records_;
  uint64_t next_id_ = 1;
  std::vector<Relayed> to_relay_;  // guarded by mu_
  // The relay and the SendRelayed calls using it now (SetRelay waits for none). Taken
  // alone or after mu_; held around MayReach, never around Relay.
  std::mutex relay_mu_;
  std::condition_variable relay_idle_;
  int relay_users_ = 0;
  CommandRelay* relay_ = nullptr;
};

}  // namespace drip::collector
