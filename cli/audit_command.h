// `dripctl audit [--report ID] [--since DUR] [--limit N] [--json]`: the collector's
// append-only audit log — every mitigation requested and its outcome, every change of
// a report's state — newest first, with who asked. What on-call reads after an incident
// and before running a mitigation again.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "cli/query_client.h"
#include "cli/terminal_style.h"
#include "drip/v1/query.pb.h"

namespace drip::cli {

struct AuditOptions {
  std::string report_id;   // empty: every report
  std::string since_text;  // e.g. "24h"; empty: everything retained
  uint32_t limit = 0;      // 0: the collector's default (100)
  bool json = false;
};

// A bad --since is INVALID_ARGUMENT naming the flag; an unknown --report NOT_FOUND when
// the collector says so.
absl::Status RunAuditCommand(QueryClient& client, const AuditOptions& options,
                             const TerminalStyle& style, std::ostream& out);

// The ListAudit request for `options` at `now_ms`.
absl::StatusOr<drip::v1::ListAuditRequest> MakeAuditRequest(const AuditOptions& options,
                                                            int64_t now_ms);

// True when `a` was written before `b`: ids are zero-padded sequence numbers, so the
// longer id is the later one and equal lengths compare as strings; entries without an
// id fall back to their time.
bool AuditEntryBefore(const drip::v1::AuditEntry& a, const drip::v1::AuditEntry& b);

// Outcomes that mean an action did not happen as asked; shown as alerts at a terminal.
bool IsBadOutcome(const std::string& outcome);

// Rendering apart from fetching, newest first whatever order `response` has.
void RenderAudit(const drip::v1::ListAuditResponse& response, const AuditOptions& options,
                 const TerminalStyle& style, std::ostream& out);

}  // namespace drip::cli
