// `dripctl hosts`: every host the collector knows, whether its agent is connected, when
// it was last heard from and what it runs — the first thing on-call looks at when a
// host's data looks wrong.
#pragma once

#include <cstdint>
#include <ostream>

#include "absl/status/status.h"
#include "cli/query_client.h"
#include "drip/v1/query.pb.h"

namespace drip::cli {

absl::Status RunHostsCommand(QueryClient& client, bool json, std::ostream& out);

// Rendering apart from fetching, so tests can check the output of a known response.
void RenderHosts(const drip::v1::ListHostsResponse& response, bool json, int64_t now_ms,
                 std::ostream& out);

}  // namespace drip::cli
