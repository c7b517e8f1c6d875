#include "cli/mitigate_command.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <csignal>
#include <map>
#include <thread>

#include "cli/audit_command.h"
#include "cli/exit_codes.h"
#include "cli/leak_report_json.h"
#include "cli/table_printer.h"
#include "common/base/duration.h"
#include "common/base/mitigation_action.h"
#include "common/base/mitigation_signal.h"
#include "common/base/strings.h"
#include "fmt/format.h"

namespace drip::cli {
namespace {

bool IsGoodOutcome(const std::string& outcome) {
  return outcome == "succeeded" || outcome == "dry-run" || outcome == "recommended";
}

// The audit log read far enough back to hold every answer to `requested`.
drip::v1::ListAuditRequest PollRequest(const std::string& report_id,
                                       const std::vector<drip::v1::AuditEntry>& requested) {
  drip::v1::ListAuditRequest request;
  request.set_report_id(report_id);
  int64_t since_ms = 0;
  for (const auto& e : requested) {
    if (e.time_ms() > 0 && (since_ms == 0 || e.time_ms() < since_ms)) since_ms = e.time_ms();
  }
  request.set_since_ms(since_ms);
  // Newest first with a limit: room for every host's answers and the other entries a
  // busy report collects meanwhile.
  request.set_limit(
      static_cast<uint32_t>(std::clamp<size_t>(requested.size() * 4 + 100, 100, 10000)));
  return request;
}

void RenderRequested(const std::vector<drip::v1::AuditEntry>& entries, std::ostream& out) {
  for (const auto& e : entries) {
    out << fmt::format("{} {}{} on {}: {}{}\n", e.action(), OrDash(e.target()),
                       e.dry_run() ? " (dry run)" : "", OrDash(e.host()), e.outcome(),
                       e.detail().empty() ? "" : " (" + e.detail() + ")");
  }
}

}  // namespace

absl::Status CheckMitigateAction(const std::string& action) {
  if (mitigation_action::IsKnown(action)) return absl::OkStatus();
  return absl::InvalidArgumentError(fmt::format(
      "--action: '{}' is not an action (restart-unit, signal-process, recommend)", action));
}

absl::StatusOr<int> ParseSignal(const std::string& text) {
  absl::StatusOr<int> signal = ParseMitigationSignal(text);
  if (!signal.ok()) {
    return absl::InvalidArgumentError("--signal: " + std::string(signal.status().message()));
  }
  return signal;
}

bool IsFinalOutcome(const std::string& outcome) {
  return IsGoodOutcome(outcome) || IsBadOutcome(outcome);
}

std::vector<drip::v1::AuditEntry> ResolveOutcomes(
    const std::vector<drip::v1::AuditEntry>& requested,
    const std::vector<drip::v1::AuditEntry>& audit) {
  // The latest final entry per command; an agent answers once, but a retry or a late
  // timeout may add another, and the last word is the one that holds.
  std::map<std::string, const drip::v1::AuditEntry*> latest;
  for (const auto& e : audit) {
    if (e.command_id().empty() || !IsFinalOutcome(e.outcome())) continue;
    auto& slot = latest[e.command_id()];
    if (slot == nullptr || AuditEntryBefore(*slot, e)) slot = &e;
  }
  std::vector<drip::v1::AuditEntry> outcomes;
  for (const auto& r : requested) {
    auto it = r.command_id().empty() ? latest.end() : latest.find(r.command_id());
    // "Not before" rather than "after": without ids the times decide, and an agent may
    // answer within the millisecond of the request.
    const bool answered =
        r.outcome() == "requested" && it != latest.end() && !AuditEntryBefore(*it->second, r);
    outcomes.push_back(answered ? *it->second : r);
  }
  return outcomes;
}

int MitigationExitCode(const std::vector<drip::v1::AuditEntry>& outcomes) {
  if (outcomes.empty()) return kExitActionFailed;
  bool pending = false;
  for (const auto& e : outcomes) {
    if (IsGoodOutcome(e.outcome())) continue;
    if (e.outcome() == "requested") {
      pending = true;
      continue;
    }
    return kExitActionFailed;
  }
  return pending ? kExitActionPending : kExitOk;
}

std::string OutcomeSummary(const std::vector<drip::v1::AuditEntry>& outcomes) {
  // In the order of the outcomes' first appearance, so the summary follows the table.
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& e : outcomes) {
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& c) { return c.first == e.outcome(); });
    if (it == counts.end()) {
      counts.emplace_back(e.outcome(), 1);
    } else {
      ++it->second;
    }
  }
  std::string summary;
  for (const auto& [outcome, n] : counts) {
    if (!summary.empty()) summary += ", ";
    summary += fmt::format("{} {}", n, outcome == "requested" ? "still requested" : outcome);
  }
  return summary.empty() ? std::string("no hosts") : summary;
}

void RenderMitigationOutcomes(const std::string& report_id,
                              const std::vector<drip::v1::AuditEntry>& outcomes, bool json,
                              const TerminalStyle& style, std::ostream& out) {
  if (json) {
    nlohmann::ordered_json entries = nlohmann::ordered_json::array();
    int pending = 0;
    for (const auto& e : outcomes) {
      entries.push_back(AuditEntryToJson(e));
      if (e.outcome() == "requested") ++pending;
    }
    nlohmann::ordered_json j;
    j["report_id"] = report_id;
    j["entries"] = std::move(entries);
    j["pending"] = pending;
    out << DumpJson(j) << "\n";
    return;
  }
  if (outcomes.empty()) {
    out << fmt::format("the collector sent no command for {}: no host to act on\n", report_id);
    return;
  }
  TablePrinter table({"HOST", "ACTION", "TARGET", "DRY RUN", "OUTCOME", "DETAIL"});
  for (const auto& e : outcomes) {
    table.AddRow({OrDash(e.host()), e.action(), OrDash(e.target()), e.dry_run() ? "yes" : "no",
                  e.outcome(), OrDash(e.detail())});
    if (!IsGoodOutcome(e.outcome())) table.AlertLastRowCell(4);
  }
  table.Print(out, style);
}

absl::StatusOr<int> RunMitigateCommand(QueryClient& client, const MitigateOptions& options,
                                       const std::string& actor, const TerminalStyle& style,
                                       std::ostream& out, std::ostream& err) {
  // Every flag is checked before anything is sent: a typo must not half-act.
  if (auto status = CheckMitigateAction(options.action); !status.ok()) return status;
  int signal = 0;
  if (!options.signal_text.empty()) {
    if (options.action != mitigation_action::kSignalProcess) {
      return absl::InvalidArgumentError("--signal: only applies to --action signal-process");
    }
    auto parsed = ParseSignal(options.signal_text);
    if (!parsed.ok()) return parsed.status();
    signal = *parsed;
  }
  auto wait = ParseDuration(options.wait_text);
  if (!wait.ok()) {
    return absl::InvalidArgumentError("--wait: " + std::string(wait.status().message()));
  }

  drip::v1::MitigateRequest request;
  request.set_id(options.id);
  request.set_action(options.action);
  request.set_dry_run(options.dry_run);
  request.set_host(options.host);
  request.set_signal(signal);
  request.set_actor(actor);
  auto response = client.Mitigate(request);
  if (!response.ok()) return response.status();
  const std::vector<drip::v1::AuditEntry> requested(response->entries().begin(),
                                                    response->entries().end());
  if (!options.json) RenderRequested(requested, out);

  std::vector<drip::v1::AuditEntry> outcomes = requested;
  absl::Status poll_status;
  const auto deadline = std::chrono::steady_clock::now() + *wait;
  if (MitigationExitCode(outcomes) == kExitActionPending && wait->count() > 0) {
    if (!options.json) {
      out << fmt::format("waiting up to {} for the agents to answer\n",
                         FormatSpan(static_cast<double>(wait->count()) / 1000));
      out.flush();
    }
    const drip::v1::ListAuditRequest poll = PollRequest(options.id, requested);
    while (MitigationExitCode(outcomes) == kExitActionPending) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) break;
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(kMitigatePollInterval, deadline - now));
      auto audit = client.ListAudit(poll);
      if (!audit.ok()) {
        // The commands are out; show what is known before the error.
        poll_status = audit.status();
        break;
      }
      outcomes = ResolveOutcomes(requested, std::vector<drip::v1::AuditEntry>(
                                                audit->entries().begin(), audit->entries().end()));
    }
  }
  if (!options.json) out << "\n";
  RenderMitigationOutcomes(options.id, outcomes, options.json, style, out);
  if (!poll_status.ok()) {
    return absl::Status(poll_status.code(),
                        fmt::format("{} (while reading the audit log for {}; the commands were "
                                    "sent: dripctl audit --report {})",
                                    std::string(poll_status.message()), options.id, options.id));
  }
  const int code = MitigationExitCode(outcomes);
  if (code != kExitOk) {
    err << fmt::format(
        "dripctl: mitigation of {}: {}{}\n", options.id, OutcomeSummary(outcomes),
        code == kExitActionPending
            ? fmt::format(" after {}; follow with dripctl audit --report {}",
                          FormatSpan(static_cast<double>(wait->count()) / 1000), options.id)
            : "");
  }
  return code;
}

}  // namespace drip::cli
