// HeapDiagnoser: ranks a heap snapshot's allocation stacks by how likely each is the
// leak that grows the process, and tells leaks from caches that plateau, startup
// buffers and transient churn (docs/design.md, "The flow"; the method and every threshold in
// docs/snapshot.md).
//
//   snapshot stacks ─► drop allocator frames, merge equal stacks (stack_merge.h)
//                   ─► evidence per stack on a common time grid (stack_evidence.h)
//                   ─► verdict, score, reason ─► leaks first, then by score
//
// Pure computation: no I/O, no logging, no clock. Diagnose() is const and thread-safe.
#pragma once

#include "common/base/heap_snapshot.h"
#include "diagnoser/diagnoser_config.h"
#include "diagnoser/diagnosis.h"

namespace drip::diagnoser {

class HeapDiagnoser {
 public:
  explicit HeapDiagnoser(DiagnoserConfig config = {});

  // `snapshot` should have passed ValidateHeapSnapshot (series in time order); an empty
  // snapshot gives an empty diagnosis whose summary says so.
  Diagnosis Diagnose(const HeapSnapshot& snapshot) const;

  const DiagnoserConfig& config() const { return config_; }

 private:
  DiagnoserConfig config_;
};

}  // namespace drip::diagnoser
