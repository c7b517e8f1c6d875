// The JSON form of a diagnosis: what `dripctl diagnose --json` prints. The keys docs/design.md
// fixes ("Fixed contracts") come first in each stack, exactly as specified:
//   {"stacks": [{"frames": [{"function", "module", "file", "line"}], "live_bytes",
//    "live_allocs", "growth_bytes_per_hour", "score", "verdict"}]}
// then extra keys (docs/snapshot.md): per frame "build_id", "module_offset", "address";
// per stack "reason", "stack_id", "sampled_allocs", "freed_fraction", "steadiness",
// "recent_growth_ratio"; at the top "rss_growth_bytes_per_hour" and "summary".
//
// A diff of two snapshots (`dripctl diagnose NEW --base OLD --json`, snapshot_diff.h):
//   {"summary", "base_end_ms", "new_end_ms", "grew_bytes", "base_anon_bytes",
//    "new_anon_bytes" (null when not read), "sites": [{"frames", "grew_bytes",
//    "grew_objects", "allocated_bytes", "allocated_objects", "base", "new"}]}
// where "base" and "new" are null when that window did not see the site, else {"verdict",
// "rank", "live_bytes", "live_allocs", "growth_bytes_per_hour",
// "sustained_bytes_per_hour", "allocated_bytes_per_hour"}.
#pragma once

#include "diagnoser/diagnosis.h"
#include "diagnoser/snapshot_diff.h"
#include "nlohmann/json.hpp"

namespace drip::diagnoser {

nlohmann::ordered_json DiagnosisToJson(const Diagnosis& diagnosis);
nlohmann::ordered_json SnapshotDiffToJson(const SnapshotDiff& diff);

}  // namespace drip::diagnoser
