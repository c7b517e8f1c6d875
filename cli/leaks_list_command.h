// `dripctl leaks list [--state S] [--component C] [--json]`: the collector's leak
// reports, most severe then most recent first — one row per report with its hosts,
// growth, shortest ETA to OOM and the innermost frame of its leaking stack, so on-call
// sees at a glance what leaks and where to look.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/query_client.h"
#include "cli/terminal_style.h"
#include "drip/v1/query.pb.h"

namespace drip::cli {

struct LeaksListOptions {
  std::string state;  // as given to --state; empty: every report not resolved
  std::string component;
  bool json = false;
};

absl::Status RunLeaksListCommand(QueryClient& client, const LeaksListOptions& options,
                                 const TerminalStyle& style, std::ostream& out);

// The request's state for --state: "" (not given) and open, acknowledged, mitigated,
// resolved, all as they are; anything else is INVALID_ARGUMENT naming --state.
absl::StatusOr<std::string> ParseLeakStateFilter(const std::string& text);

// Rendering apart from fetching, so tests can check the output of a known response.
void RenderLeaksList(const drip::v1::ListLeaksResponse& response, const LeaksListOptions& options,
                     int64_t now_ms, const TerminalStyle& style, std::ostream& out);

}  // namespace drip::cli
