#include "cli/audit_command.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "cli/leak_report_json.h"
#include "cli/table_printer.h"
#include "common/base/duration.h"
#include "fmt/format.h"

namespace drip::cli {
namespace {

std::string NoEntriesLine(const AuditOptions& options) {
  std::string line = "no audit entries";
  if (!options.report_id.empty()) line += " for report " + options.report_id;
  if (!options.since_text.empty()) line += " in the last " + options.since_text;
  return line;
}

}  // namespace

bool AuditEntryBefore(const drip::v1::AuditEntry& a, const drip::v1::AuditEntry& b) {
  if (a.id().empty() || b.id().empty()) return a.time_ms() < b.time_ms();
  if (a.id().size() != b.id().size()) return a.id().size() < b.id().size();
  return a.id() < b.id();
}

bool IsBadOutcome(const std::string& outcome) {
  return outcome == "failed" || outcome == "refused" || outcome == "timed-out";
}

absl::StatusOr<drip::v1::ListAuditRequest> MakeAuditRequest(const AuditOptions& options,
                                                            int64_t now_ms) {
  drip::v1::ListAuditRequest request;
  request.set_report_id(options.report_id);
  request.set_limit(options.limit);
  if (!options.since_text.empty()) {
    auto since = ParseDuration(options.since_text);
    if (!since.ok()) {
      return absl::InvalidArgumentError("--since: " + std::string(since.status().message()));
    }
    request.set_since_ms(std::max<int64_t>(0, now_ms - since->count()));
  }
  return request;
}

void RenderAudit(const drip::v1::ListAuditResponse& response, const AuditOptions& options,
                 const TerminalStyle& style, std::ostream& out) {
  std::vector<const drip::v1::AuditEntry*> entries;
  for (const auto& e : response.entries()) entries.push_back(&e);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto* a, const auto* b) { return AuditEntryBefore(*b, *a); });
  if (options.json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto* e : entries) list.push_back(AuditEntryToJson(*e));
    nlohmann::ordered_json j;
    j["entries"] = std::move(list);
    out << DumpJson(j) << "\n";
    return;
  }
  if (entries.empty()) {
    out << NoEntriesLine(options) << "\n";
    return;
  }
  TablePrinter table({"TIME (UTC)", "ACTOR", "REPORT", "HOST", "ACTION", "TARGET", "DRY RUN",
                      "OUTCOME", "DETAIL"});
  for (const auto* e : entries) {
    table.AddRow({FormatIsoTimestamp(e->time_ms()), OrDash(e->actor()), OrDash(e->report_id()),
                  OrDash(e->host()), e->action(), OrDash(e->target()), e->dry_run() ? "yes" : "no",
                  e->outcome(), OrDash(e->detail())});
    if (IsBadOutcome(e->outcome())) table.AlertLastRowCell(7);
  }
  table.Print(out, style);
}

absl::Status RunAuditCommand(QueryClient& client, const AuditOptions& options,
                             const TerminalStyle& style, std::ostream& out) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  auto request = MakeAuditRequest(options, now_ms);
  if (!request.ok()) return request.status();
  auto response = client.ListAudit(*request);
  if (!response.ok()) return response.status();
  RenderAudit(*response, options, style, out);
  return absl::OkStatus();
}

}  // namespace drip::cli
