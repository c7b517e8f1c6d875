// `dripctl suspects`: what the collector's online leak detector suspects right now —
// each (host, component) with its growth, ETA to OOM and the reason, and the components
// they add up to. The on-call engineer's list of leaks before they become reports.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "cli/query_client.h"
#include "drip/v1/query.pb.h"

namespace drip::cli {

absl::Status RunSuspectsCommand(QueryClient& client, const std::string& component, bool json,
                                std::ostream& out);

// Rendering apart from fetching, so tests can check the output of a known response.
void RenderSuspects(const drip::v1::ListSuspectsResponse& response, bool json, int64_t now_ms,
                    std::ostream& out);

}  // namespace drip::cli
