// MitigationCoordinator: carries out mitigations, the leak pipeline's last stage
// (leak_pipeline.h). Automatic policies are evaluated after every detector pass; dripctl's requests
// arrive through the query API. Either way the planner picks the hosts within the policy's limits,
// the command goes down the host's agent stream, and the request and, later, the agent's outcome
// (or a time-out) are recorded in the report and the audit log. The agent has the last
// word: it executes only actions its own config allows.
//
// Thread-safe: Tick runs on the pipeline's thread, Request on query threads,
// OnCommandResult on storage workers (agent sessions); one mutex, taken before the book's.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/collector_metrics.h"
#include "collector/connected_hosts.h"
#include "collector/leak_report_book.h"
#include "collector/mitigation_planner.h"
#include "collector/mitigation_policy.h"
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

  // An agent's answer; false when the command is not a pending mitigation.
  bool OnCommandResult(const std::string& host, const drip::v1::CommandResult& result,
                       int64_t now_ms);

 private:
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

  const MitigationConfig config_;
  LeakReportBook* book_;
  ConnectedHosts* hosts_;
  CollectorMetrics* metrics_;
  std::mutex mu_;
  std::map<std::string, Pending> pending_;  // by command id
  std::deque<int64_t> recent_actions_ms_;   // for max_actions_per_hour
  uint64_t next_id_ = 1;
};

}  // namespace drip::collector
