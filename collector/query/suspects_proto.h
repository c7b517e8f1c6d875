// The wire form of the leak pipeline's suspects (fleet_suspects.h <->
// drip.v1.ListSuspectsResponse), made once at the query API's edge. It is read back in one
// place: in a cluster, the member that owns a component's leak report folds in the other
// members' suspects of it, which reach it as their ListSuspects answers (docs/cluster.md).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/pipeline/fleet_suspects.h"
#include "drip/v1/query.pb.h"

namespace drip::collector {

// Appends every suspect and component of `suspects` to `out`.
void FleetSuspectsToProto(const FleetSuspects& suspects, drip::v1::ListSuspectsResponse* out);

// The suspects of `response` (its `unanswered` is not read). A suspect with a rule,
// snapshot state or diagnosis this build does not know (a newer member, mid-upgrade) is
// left out, and `skipped` (when not null) gets one line naming its host and field.
FleetSuspects FleetSuspectsFromProto(const drip::v1::ListSuspectsResponse& response,
                                     std::vector<std::string>* skipped = nullptr);

}  // namespace drip::collector
