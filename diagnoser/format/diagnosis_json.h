// The JSON form of a diagnosis: what `dripctl diagnose --json` prints. The keys docs/design.md
// fixes ("Fixed contracts") come first in each stack, exactly as specified:
//   {"stacks": [{"frames": [{"function", "module", "file", "line"}], "live_bytes",
//    "live_allocs", "growth_bytes_per_hour", "score", "verdict"}]}
// then extra keys (docs/snapshot.md): per frame "build_id", "module_offset", "address";
// per stack "reason", "stack_id", "sampled_allocs", "freed_fraction", "steadiness",
// "recent_growth_ratio"; at the top "rss_growth_bytes_per_hour" and "summary".
#pragma once

#include "diagnoser/diagnosis.h"
#include "nlohmann/json.hpp"

namespace drip::diagnoser {

nlohmann::ordered_json DiagnosisToJson(const Diagnosis& diagnosis);

}  // namespace drip::diagnoser
