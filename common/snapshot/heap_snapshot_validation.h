// The checks a heap snapshot must pass whatever form it arrived in (JSON from a file,
// protobuf from an agent): supported version and mode, non-negative sizes, counts and
// times, series in strictly increasing time, unique stack ids. The JSON and proto readers both
// run it, so that the diagnoser can rely on these invariants.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "common/base/heap_snapshot.h"

namespace drip {

// OK, or INVALID_ARGUMENT with one line "SOURCE: PATH: what is wrong", where PATH is the
// JSON path of the field (docs/snapshot.md), e.g. "stacks[3].series[2].t_ms".
absl::Status ValidateHeapSnapshot(const HeapSnapshot& snapshot, std::string_view source_name);

}  // namespace drip
