// `dripctl leaks show ID [--json]`: one leak report as on-call reads it — what leaks,
// on which hosts and how fast, the call stacks that leak, what the mitigation policy
// recommends, what was done about it and who changed its state.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "cli/query_client.h"
#include "cli/terminal_style.h"
#include "drip/v1/report.pb.h"

namespace drip::cli {

// NOT_FOUND (exit kExitNotFound) for an unknown id.
absl::Status RunLeaksShowCommand(QueryClient& client, const std::string& id, bool json,
                                 const TerminalStyle& style, std::ostream& out);

// Rendering apart from fetching, so tests can check the output of a known report.
void RenderLeakReport(const drip::v1::LeakReport& report, bool json, int64_t now_ms,
                      const TerminalStyle& style, std::ostream& out);

}  // namespace drip::cli
