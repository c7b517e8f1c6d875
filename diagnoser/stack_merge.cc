#include "diagnoser/stack_merge.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>

#include "diagnoser/allocator_frames.h"
#include "diagnoser/live_series.h"

namespace drip::diagnoser {
namespace {

// Every field counts: inlined frames share an address but not a function or line.
std::string FramesKey(const std::vector<StackFrame>& frames) {
  std::string key;
  for (const StackFrame& f : frames) {
    key.append(reinterpret_cast<const char*>(&f.address), sizeof(f.address));
    key.append(reinterpret_cast<const char*>(&f.module_offset), sizeof(f.module_offset));
    key.append(reinterpret_cast<const char*>(&f.line), sizeof(f.line));
    for (const std::string* s : {&f.function, &f.module, &f.build_id, &f.file}) {
      key.append(std::to_string(s->size())).push_back(':');
      key.append(*s);
    }
    key.push_back('\n');
  }
  return key;
}

// Counts and byte estimates of merged stacks: a sum past the int64 range is held at its
// end rather than wrapping (such figures are estimates far beyond any real heap).
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

int64_t EarliestNonZero(int64_t a, int64_t b) {
  if (a == 0) return b;
  if (b == 0) return a;
  return std::min(a, b);
}

}  // namespace

std::vector<MergedStack> MergeStacks(const std::vector<SnapshotStack>& stacks) {
  std::vector<MergedStack> merged;
  // Per merged stack, the series of every stack it stands for, summed once at the end.
  std::vector<std::vector<const std::vector<LivePoint>*>> series;
  std::unordered_map<std::string, size_t> index;
  for (const SnapshotStack& s : stacks) {
    std::vector<StackFrame> frames = DropAllocatorFrames(s.frames);
    auto [it, inserted] = index.emplace(FramesKey(frames), merged.size());
    if (inserted) {
      MergedStack& m = merged.emplace_back();
      m.stack = s;
      m.stack.frames = std::move(frames);
      series.push_back({&s.series});
      continue;
    }
    MergedStack& m = merged[it->second];
    SnapshotStack& into = m.stack;
    ++m.sources;
    series[it->second].push_back(&s.series);
    into.id = std::min(into.id, s.id);
    into.sampled_allocs = SaturatingAdd(into.sampled_allocs, s.sampled_allocs);
    into.sampled_frees = SaturatingAdd(into.sampled_frees, s.sampled_frees);
    into.allocated_bytes = SaturatingAdd(into.allocated_bytes, s.allocated_bytes);
    into.freed_bytes = SaturatingAdd(into.freed_bytes, s.freed_bytes);
    into.first_alloc_ms = EarliestNonZero(into.first_alloc_ms, s.first_alloc_ms);
    into.last_alloc_ms = std::max(into.last_alloc_ms, s.last_alloc_ms);
    // Same window, same slicing: slice by slice. Slicings that differ cannot be added up.
    if (into.cohorts.size() == s.cohorts.size()) {
      for (size_t c = 0; c < s.cohorts.size(); ++c) {
        into.cohorts[c].allocs = SaturatingAdd(into.cohorts[c].allocs, s.cohorts[c].allocs);
        into.cohorts[c].live = SaturatingAdd(into.cohorts[c].live, s.cohorts[c].live);
      }
    } else {
      into.cohorts.clear();
    }
  }
  for (size_t i = 0; i < merged.size(); ++i) {
    if (series[i].size() > 1) merged[i].stack.series = SumSeries(series[i]);
  }
  return merged;
}

}  // namespace drip::diagnoser
