// What the members of a cluster tell each other of their detectors' fleet drift, so that
// the fleet rule judges a component by all its hosts however they are spread over the
// collectors (docs/cluster.md, "Fleet drift across members"). The counts are the
// analyzer's mergeable ComponentDrift: merged by addition, as RESIN's bucket counts are.
//
// The form kept in etcd is JSON, readable with `etcdctl get --prefix /drip/drift/`:
//   {"v":1,"components":{"svc:api.service":[b0,b1,b2,b3,b4,climbing,seen,
//                                            longest_released_rise_s,releasing,
//                                            longest_warmup_s,warmed]}}
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/component_drift.h"

namespace drip::collector {

std::string EncodeFleetDrift(
    const std::vector<std::pair<std::string, analyzer::ComponentDrift>>& drifts);

// INVALID_ARGUMENT naming what is wrong (a member running a newer format, a malformed entry).
absl::StatusOr<std::map<std::string, analyzer::ComponentDrift>> DecodeFleetDrift(
    const std::string& encoded);

// The other members' shares (by member name) summed per component; a share that cannot be
// read is left out and its member named in `unreadable`.
std::map<std::string, analyzer::ComponentDrift> SumPeerDrift(
    const std::map<std::string, std::string>& shares, std::vector<std::string>* unreadable);

}  // namespace drip::collector
