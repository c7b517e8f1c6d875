// The JSON form of a heap snapshot (common/base/heap_snapshot.h): what
// `drip-agent snapshot --output snapshot.json` writes and `dripctl diagnose` reads.
// docs/snapshot.md documents every key. Keys follow the struct's field names in
// snake_case, grouped as in the file: target, window, sampling, duty_cycle, stop, events,
// rss, stacks.
//
// Writing then parsing gives back the same struct, field for field (strings must be valid
// UTF-8; invalid bytes are written as U+FFFD). Parsing is strict about what the diagnosis
// depends on and lenient about descriptive fields: docs/snapshot.md marks which keys are
// required. Unknown keys are ignored so that older readers accept newer snapshots.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/base/heap_snapshot.h"

namespace drip {

// Pretty-printed (2-space indent), keys in the documented order, ending in a newline.
std::string HeapSnapshotToJson(const HeapSnapshot& snapshot);

// Parses and validates (ValidateHeapSnapshot) a snapshot. Errors are INVALID_ARGUMENT and
// one line naming `source_name` and the JSON path of the offending value, e.g.
// "snapshot.json: stacks[3].series[2].live_bytes: expected an integer", or the line and
// column of a syntax error. Never throws.
absl::StatusOr<HeapSnapshot> ParseHeapSnapshotJson(std::string_view text,
                                                   std::string_view source_name);

}  // namespace drip
