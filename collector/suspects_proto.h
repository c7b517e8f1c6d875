// The wire form of the leak pipeline's suspects (fleet_suspects.h ->
// drip.v1.ListSuspectsResponse), made once at the query API's edge.
#pragma once

#include "collector/fleet_suspects.h"
#include "drip/v1/query.pb.h"

namespace drip::collector {

// Appends every suspect and component of `suspects` to `out`.
void FleetSuspectsToProto(const FleetSuspects& suspects, drip::v1::ListSuspectsResponse* out);

}  // namespace drip::collector
