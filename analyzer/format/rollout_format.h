// The rollout correlation's two forms (analyzer/rollout_correlation.h): protobuf
// (drip.v1.RolloutEvidence, in the collector's leak reports) and JSON (`dripctl leaks show
// --json` and `dripctl analyze`), so that online and offline reports read the same.
#pragma once

#include "analyzer/rollout_correlation.h"
#include "drip/v1/report.pb.h"
#include "nlohmann/json.hpp"

namespace drip::analyzer {

void RolloutFindingToProto(const RolloutFinding& finding, drip::v1::RolloutEvidence* out);

// {"verdict", "version", "summary", "versions": [{"version", "leaking_hosts",
// "healthy_hosts", "began_at_change"}]}; an empty verdict reads "unknown".
nlohmann::ordered_json RolloutEvidenceToJson(const drip::v1::RolloutEvidence& rollout);

}  // namespace drip::analyzer
