// The wire form of the leak pipeline's suspects (fleet_suspects.h <->
// drip.v1.ListSuspectsResponse), made once at the query API's edge. It is read back in one
// place: in a cluster, the member that owns a component's leak report folds in the other
// members' suspects of it, which reach it as their ListSuspects answers (docs/cluster.md).
#pragma once

#include "absl/status/statusor.h"
#include "collector/fleet_suspects.h"
#include "drip/v1/query.pb.h"

namespace drip::collector {

// Appends every suspect and component of `suspects` to `out`.
void FleetSuspectsToProto(const FleetSuspects& suspects, drip::v1::ListSuspectsResponse* out);

// The suspects of `response` (its `unanswered` is not read). INVALID_ARGUMENT naming the
// host and field for a rule, snapshot state or diagnosis this build does not know.
absl::StatusOr<FleetSuspects> FleetSuspectsFromProto(
    const drip::v1::ListSuspectsResponse& response);

}  // namespace drip::collector
