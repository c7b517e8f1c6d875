#include "diagnoser/stack_merge.h"

#include <algorithm>
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

int64_t EarliestNonZero(int64_t a, int64_t b) {
  if (a == 0) return b;
  if (b == 0) return a;
  return std::min(a, b);
}

}  // namespace

std::vector<MergedStack> MergeStacks(const std::vector<SnapshotStack>& stacks) {
  std::vector<MergedStack> merged;
  std::unordered_map<std::string, size_t> index;
  for (const SnapshotStack& s : stacks) {
    std::vector<StackFrame> frames = DropAllocatorFrames(s.frames);
    auto [it, inserted] = index.emplace(FramesKey(frames), merged.size());
    if (inserted) {
      MergedStack& m = merged.emplace_back();
      m.stack = s;
      m.stack.frames = std::move(frames);
      continue;
    }
    MergedStack& m = merged[it->second];
    SnapshotStack& into = m.stack;
    ++m.sources;
    into.id = std::min(into.id, s.id);
    into.series = SumSeries(into.series, s.series);
    into.sampled_allocs += s.sampled_allocs;
    into.sampled_frees += s.sampled_frees;
    into.allocated_bytes += s.allocated_bytes;
    into.freed_bytes += s.freed_bytes;
    into.first_alloc_ms = EarliestNonZero(into.first_alloc_ms, s.first_alloc_ms);
    into.last_alloc_ms = std::max(into.last_alloc_ms, s.last_alloc_ms);
  }
  return merged;
}

}  // namespace drip::diagnoser
