// Diagnosis: the diagnoser's verdict on one heap snapshot — its stacks ranked by how
// likely each is the leak, each with a verdict and the reason in words. HeapDiagnoser
// produces it; dripctl prints it (diagnosis_json.h is the `dripctl diagnose --json`
// contract), the collector stores it as drip.v1.Diagnosis (diagnosis_proto.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/heap_snapshot.h"

namespace drip::diagnoser {

// What a stack's live bytes did over the window (docs/snapshot.md, "Verdicts").
enum class Verdict {
  kLeak,       // sustained growth that does not level off, objects not freed
  kCache,      // grew then levelled off, or held a bounded level while churning
  kStartup,    // allocated at (or before) the start and held, nothing since
  kTransient,  // freed soon after allocation, or too little to say anything
  // It grew, but the window's evidence cannot tell whether it is a leak: too few sampled
  // allocations, or still filling without having levelled off. Never ranked as a leak.
  kInconclusive,
};

// "leak", "cache", "startup", "transient", "inconclusive".
std::string_view VerdictName(Verdict verdict);
std::optional<Verdict> ParseVerdict(std::string_view name);

struct DiagnosedStack {
  std::vector<StackFrame> frames;  // innermost first, allocator frames dropped
  // At the end of the window (estimates, see common/base/heap_snapshot.h).
  int64_t live_bytes = 0;
  int64_t live_allocs = 0;
  double growth_bytes_per_hour = 0;  // robust trend of live bytes over the window
  double score = 0;                  // 0..1, higher = more likely the leak
  Verdict verdict = Verdict::kTransient;
  std::string reason;
  // The snapshot stack's id; for stacks merged after dropping allocator frames, the
  // smallest id among them.
  uint64_t stack_id = 0;
  // The evidence behind the verdict and score.
  int64_t sampled_allocs = 0;      // summed over merged stacks
  double freed_fraction = 0;       // freed_bytes / allocated_bytes in the window
  double steadiness = 0;           // R² of a straight line through the live bytes
  double recent_growth_ratio = 0;  // slope over the last third / over the first two
};

// What the snapshot as a whole showed.
enum class Outcome {
  kLeak,          // at least one stack is a leak
  kNoLeak,        // no stack grows as a leak would, and the process is not growing
  kInconclusive,  // something grows (the process, or stacks too thinly sampled to judge)
                  // but the evidence does not name a leak: next_step says what decides it
};

// "leak", "no_leak", "inconclusive".
std::string_view OutcomeName(Outcome outcome);
std::optional<Outcome> ParseOutcome(std::string_view name);

struct Diagnosis {
  std::vector<DiagnosedStack> stacks;  // leaks first, each group by score
  // Trend of the target's anonymous RSS (+ swap) over the window; 0 when not measured.
  double rss_growth_bytes_per_hour = 0;
  Outcome outcome = Outcome::kNoLeak;
  std::string summary;  // one line for people
  // With kInconclusive: the one command that would gather the evidence to decide (a
  // longer, denser or better-funded snapshot of the same process).
  std::string next_step;
};

// The frame as people read it: "function (file:line)", "function", "module+0xoffset" or
// "0xaddress"; the module by its file name only.
std::string FrameLabel(const StackFrame& frame);

}  // namespace drip::diagnoser
