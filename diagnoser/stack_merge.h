// Stack merging: after allocator frames are dropped, stacks that differ only in how the
// allocator was reached (malloc vs operator new, the preload shim's own frames) are the
// same allocation site and are judged as one: their series add up pointwise and their
// counters sum.
#pragma once

#include <vector>

#include "common/base/heap_snapshot.h"

namespace drip::diagnoser {

struct MergedStack {
  SnapshotStack stack;  // frames without the allocator frames; id the smallest merged
  int sources = 1;      // how many snapshot stacks it stands for
};

// One MergedStack per distinct frame list (every field of every frame compared), in the
// order of each list's first appearance in the snapshot.
std::vector<MergedStack> MergeStacks(const std::vector<SnapshotStack>& stacks);

}  // namespace drip::diagnoser
