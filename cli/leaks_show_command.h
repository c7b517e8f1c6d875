// `dripctl leaks show ID [--json]`: one leak report as on-call reads it — what leaks,
// on which hosts and how fast, a chart of the most urgent host's memory over the report's
// life with its limit (memory_chart.h), the call stacks that leak, what the mitigation
// policy recommends, what was done about it and who changed its state.
// --pprof FILE also writes the report's latest heap snapshot as a pprof profile; --diff
// shows instead what grew between the first and latest snapshots the report keeps of one
// process (as `dripctl diagnose NEW --base OLD`, with --json and --pprof alike). Both
// diagnose the snapshots here, with the diagnoser's defaults.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cli/memory_chart.h"
#include "cli/query_client.h"
#include "cli/terminal_style.h"
#include "drip/v1/report.pb.h"

namespace drip::cli {

struct LeaksShowOptions {
  std::string id;
  bool json = false;
  std::string pprof_path;  // also write a gzipped pprof profile here (empty: none)
  bool diff = false;
};

// NOT_FOUND (exit kExitNotFound) for an unknown id or a report without a snapshot;
// FAILED_PRECONDITION for --diff of a report that keeps one snapshot so far;
// INVALID_ARGUMENT for a --pprof path that cannot be written (before any call).
absl::Status RunLeaksShowCommand(QueryClient& client, const LeaksShowOptions& options,
                                 const TerminalStyle& style, std::ostream& out);

// Rendering apart from fetching, so tests can check the output of a known report.
// `memory` is the most urgent host's stored series of the component (time order), charted
// under the hosts; empty: no chart.
void RenderLeakReport(const drip::v1::LeakReport& report, bool json, int64_t now_ms,
                      const TerminalStyle& style, std::ostream& out,
                      const std::vector<MemoryPoint>& memory = {});

}  // namespace drip::cli
