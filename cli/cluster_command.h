// `dripctl cluster`: the collectors that share the fleet (docs/cluster.md), as the
// collector dripctl asked sees them: each member's address, how many agents stream to it,
// how many of the known hosts rendezvous placement puts on it, since when it runs, and
// whether that collector reaches etcd. A standalone collector
// (no etcd) lists itself alone.
#pragma once

#include <cstdint>
#include <ostream>

#include "absl/status/status.h"
#include "cli/query_client.h"
#include "drip/v1/query.pb.h"

namespace drip::cli {

absl::Status RunClusterCommand(QueryClient& client, bool json, std::ostream& out);

// Rendering apart from fetching, so tests can check the output of a known response.
void RenderCluster(const drip::v1::ListMembersResponse& response, bool json, int64_t now_ms,
                   std::ostream& out);

}  // namespace drip::cli
