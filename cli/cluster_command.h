// `dripctl cluster`: the collectors that share the fleet (docs/cluster.md), as the
// collector dripctl asked sees them: each member's address, how many agents stream to it,
// the known hosts rendezvous placement puts on it (how many, and the first by name), since
// when it runs, and whether that collector reaches etcd; with --host, which member a host
// is placed on. A standalone collector (no etcd) lists itself alone, with every host.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "cli/query_client.h"
#include "drip/v1/query.pb.h"

namespace drip::cli {

struct ClusterOptions {
  bool json = false;
  std::string host;        // only where this host is placed (empty: every member's hosts)
  uint32_t max_hosts = 0;  // host names per member (0: the collector's default, 100)
};

absl::Status RunClusterCommand(QueryClient& client, const ClusterOptions& options,
                               std::ostream& out);

// Rendering apart from fetching, so tests can check the output of a known response.
void RenderCluster(const drip::v1::ListMembersResponse& response, const ClusterOptions& options,
                   int64_t now_ms, std::ostream& out);

}  // namespace drip::cli
