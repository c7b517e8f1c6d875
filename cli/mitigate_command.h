// `dripctl mitigate ID --action ACTION [--dry-run] [--host H] [--signal SIG] [--wait DUR]
// [--json]`: asks the collector to mitigate a leak report — restart the systemd unit,
// signal the process, or only recommend — within the component's policy, then follows
// the audit log until every host's agent has answered (or --wait runs out) and exits
// with a code a script can act on (cli/exit_codes.h).
//
// The collector answers Mitigate at once with one audit entry per host: "requested"
// (sent to the agent), "refused" (a policy limit) or "recommended". An agent's answer is
// a later audit entry with the same command_id and a final outcome.
#pragma once

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/query_client.h"
#include "cli/terminal_style.h"
#include "drip/v1/report.pb.h"

namespace drip::cli {

struct MitigateOptions {
  std::string id;
  std::string action;  // restart-unit, signal-process, recommend
  bool dry_run = false;
  std::string host;         // empty: the report's hosts within the policy's limits
  std::string signal_text;  // empty: the policy's signal
  std::string wait_text = "30s";
  bool json = false;
};

// How often the audit log is read while waiting for agents.
inline constexpr std::chrono::milliseconds kMitigatePollInterval{500};

// INVALID_ARGUMENT naming --action unless restart-unit, signal-process or recommend.
absl::Status CheckMitigateAction(const std::string& action);
// "SIGTERM", "TERM", "term", "15" -> 15. Names of the usual signals (HUP INT QUIT ABRT
// KILL USR1 USR2 TERM ...), with or without "SIG" and in any case, or a number from 1 to
// 64. INVALID_ARGUMENT naming --signal otherwise.
absl::StatusOr<int> ParseSignal(const std::string& text);

// succeeded, failed, refused, timed-out, dry-run, recommended: nothing more will come.
bool IsFinalOutcome(const std::string& outcome);
// For each of `requested` (Mitigate's answer) the entry that tells how it ended: the
// latest entry of `audit` not written before it (AuditEntryBefore) with the same non-empty
// command_id and a final outcome; the entry itself when it is final already or no
// answer has come yet (then its outcome stays "requested").
std::vector<drip::v1::AuditEntry> ResolveOutcomes(
    const std::vector<drip::v1::AuditEntry>& requested,
    const std::vector<drip::v1::AuditEntry>& audit);
// kExitOk when every outcome is succeeded, dry-run or recommended; kExitActionFailed when
// any failed, was refused, timed out or is an outcome this dripctl does not know;
// else kExitActionPending when some are still "requested". No entries at all is
// kExitActionFailed: nothing was done.
int MitigationExitCode(const std::vector<drip::v1::AuditEntry>& outcomes);
// "2 succeeded, 1 refused, 1 still requested".
std::string OutcomeSummary(const std::vector<drip::v1::AuditEntry>& outcomes);

// The table HOST, ACTION, TARGET, DRY RUN, OUTCOME, DETAIL, or with `json`
// {"report_id", "entries": [final entries], "pending": N}.
void RenderMitigationOutcomes(const std::string& report_id,
                              const std::vector<drip::v1::AuditEntry>& outcomes, bool json,
                              const TerminalStyle& style, std::ostream& out);

// The exit code on success (MitigationExitCode; its one-line explanation on `err` when
// it is not 0); an error status when a call to the collector fails or a flag is bad.
absl::StatusOr<int> RunMitigateCommand(QueryClient& client, const MitigateOptions& options,
                                       const std::string& actor, const TerminalStyle& style,
                                       std::ostream& out, std::ostream& err);

}  // namespace drip::cli
