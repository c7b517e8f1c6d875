#include "diagnoser/stack_merge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "diagnoser/live_series.h"
#include "diagnoser/synthetic_heap.h"

namespace drip::diagnoser {
namespace {

using testing::Frame;

SnapshotStack Stack(uint64_t id, std::vector<StackFrame> frames, std::vector<LivePoint> series) {
  SnapshotStack s;
  s.id = id;
  s.frames = std::move(frames);
  s.series = std::move(series);
  return s;
}

TEST(StackMergeTest, StacksEqualAfterDroppingAllocatorFramesAreMerged) {
  const StackFrame site = Frame("Cache::Insert(Key const&)", "/usr/bin/app", "cache.cc", 41);
  const StackFrame caller = Frame("main", "/usr/bin/app", "main.cc", 7);
  SnapshotStack via_new =
      Stack(9,
            {Frame("malloc", "/lib/libc.so.6"),
             Frame("operator new(unsigned long)", "/lib/libstdc++.so.6"), site, caller},
            {{1000, 100, 1}, {2000, 200, 2}, {3000, 300, 3}});
  via_new.sampled_allocs = 3;
  via_new.allocated_bytes = 300;
  via_new.first_alloc_ms = 900;
  via_new.last_alloc_ms = 2900;
  SnapshotStack via_mangled = Stack(4, {Frame("_Znwm", "/lib/libstdc++.so.6"), site, caller},
                                    {{2000, 10, 1}, {3000, 20, 2}});
  via_mangled.sampled_allocs = 2;
  via_mangled.allocated_bytes = 20;
  via_mangled.freed_bytes = 5;
  via_mangled.first_alloc_ms = 1500;
  via_mangled.last_alloc_ms = 2950;
  SnapshotStack other = Stack(5, {Frame("malloc", "/lib/libc.so.6"), caller}, {{1000, 7, 1}});

  std::vector<MergedStack> merged = MergeStacks({via_new, via_mangled, other});
  ASSERT_EQ(merged.size(), 2u);
  const MergedStack& m = merged[0];
  EXPECT_EQ(m.sources, 2);
  EXPECT_EQ(m.stack.id, 4u);
  ASSERT_EQ(m.stack.frames.size(), 2u);
  EXPECT_EQ(m.stack.frames[0].function, "Cache::Insert(Key const&)");
  ASSERT_EQ(m.stack.series.size(), 3u);
  EXPECT_EQ(m.stack.series[0].live_bytes, 100);  // the second had nothing yet
  EXPECT_EQ(m.stack.series[1].live_bytes, 210);
  EXPECT_EQ(m.stack.series[2].live_bytes, 320);
  EXPECT_EQ(m.stack.series[2].live_allocs, 5);
  EXPECT_EQ(m.stack.sampled_allocs, 5);
  EXPECT_EQ(m.stack.allocated_bytes, 320);
  EXPECT_EQ(m.stack.freed_bytes, 5);
  EXPECT_EQ(m.stack.first_alloc_ms, 900);
  EXPECT_EQ(m.stack.last_alloc_ms, 2950);
  EXPECT_EQ(merged[1].sources, 1);
  EXPECT_EQ(merged[1].stack.frames[0].function, "main");
}

TEST(StackMergeTest, InlinedFramesAtOneAddressStayApart) {
  StackFrame a = Frame("Parse", "/usr/bin/app", "parse.cc", 10, 0x401000);
  StackFrame b = Frame("ParseInline", "/usr/bin/app", "parse.h", 3, 0x401000);
  EXPECT_EQ(MergeStacks({Stack(1, {a}, {}), Stack(2, {b}, {})}).size(), 2u);
}

// Found by fuzzing (tests/fuzz/regressions/heap_snapshot_json_fuzzer/): counters of merged
// stacks were summed with signed overflow.
TEST(StackMergeTest, MergedCountersAndSeriesSaturateInsteadOfOverflowing) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::vector<StackFrame> frames = {Frame("Cache::Put()")};
  SnapshotStack a = Stack(1, frames, {{10, kMax, kMax}});
  SnapshotStack b = Stack(2, frames, {{10, kMax, 1}, {20, 5, 1}});
  for (SnapshotStack* s : {&a, &b}) {
    s->sampled_allocs = s->sampled_frees = s->allocated_bytes = s->freed_bytes = kMax;
  }
  std::vector<MergedStack> merged = MergeStacks({a, b});
  ASSERT_EQ(merged.size(), 1u);
  const SnapshotStack& m = merged[0].stack;
  EXPECT_EQ(m.sampled_allocs, kMax);
  EXPECT_EQ(m.allocated_bytes, kMax);
  ASSERT_EQ(m.series.size(), 2u);
  EXPECT_EQ(m.series[0].live_bytes, kMax);
  // The sum is exact again once it is back in range.
  EXPECT_EQ(m.series[1].live_bytes, kMax);
  EXPECT_EQ(m.series[1].live_allocs, kMax);
  EXPECT_EQ(MergeStacks(
                {Stack(1, frames, {{10, kMax, 0}, {20, 1, 0}}), Stack(2, frames, {{15, 9, 0}})})[0]
                .stack.series[2]
                .live_bytes,
            10);
}

// Found by fuzzing: merging added one stack's series at a time into the growing sum, so a
// snapshot of many equal stacks took quadratic time (minutes for a 16 MiB snapshot, on
// the collector's storage thread). Tens of thousands now merge in milliseconds.
TEST(StackMergeTest, ManyEqualStacksMergeIntoOneSum) {
  const std::vector<StackFrame> frames = {Frame("malloc", "/lib/libc.so.6"), Frame("Leak()")};
  std::vector<SnapshotStack> stacks;
  constexpr int kStacks = 50'000;
  for (int i = 0; i < kStacks; ++i) {
    stacks.push_back(Stack(static_cast<uint64_t>(kStacks - i), frames, {{1000 + i, 4096, 1}}));
  }
  std::vector<MergedStack> merged = MergeStacks(stacks);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].sources, kStacks);
  EXPECT_EQ(merged[0].stack.id, 1u);
  ASSERT_EQ(merged[0].stack.series.size(), static_cast<size_t>(kStacks));
  EXPECT_EQ(merged[0].stack.series.back().live_bytes, int64_t{4096} * kStacks);
  EXPECT_EQ(merged[0].stack.series.back().live_allocs, kStacks);
}

// CommonTimes sorted its growing union again for every stack once the times were mostly
// distinct: 50 000 stacks of two read-outs each took over half a minute in dripctl
// diagnose, and the hundreds of thousands a 16 MiB snapshot holds would have taken hours.
TEST(LiveSeriesTest, CommonTimesOfManyStacksWithDistinctTimes) {
  std::vector<SnapshotStack> stacks;
  constexpr int kStacks = 200'000;
  for (int i = 0; i < kStacks; ++i) {
    stacks.push_back(Stack(static_cast<uint64_t>(i + 1), {}, {{10 * i, 1, 1}, {10 * i + 5, 2, 1}}));
  }
  const std::vector<int64_t> times = CommonTimes(stacks, 1024);
  ASSERT_EQ(times.size(), 1024u);
  EXPECT_EQ(times.front(), 0);
  EXPECT_EQ(times.back(), 10 * (kStacks - 1) + 5);
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
}

TEST(LiveSeriesTest, SumHoldsEachSeriesBetweenItsReadOuts) {
  std::vector<LivePoint> sum = SumSeries({{10, 1, 1}, {30, 3, 3}}, {{20, 100, 1}, {30, 200, 2}});
  ASSERT_EQ(sum.size(), 3u);
  EXPECT_EQ(sum[0].live_bytes, 1);
  EXPECT_EQ(sum[1].live_bytes, 101);
  EXPECT_EQ(sum[2].live_bytes, 203);
}

TEST(LiveSeriesTest, CommonTimesAreTheUnionOrEvenlySpacedWhenTooMany) {
  std::vector<SnapshotStack> stacks = {Stack(1, {}, {{10, 0, 0}, {20, 0, 0}}),
                                       Stack(2, {}, {{20, 0, 0}, {25, 0, 0}})};
  EXPECT_EQ(CommonTimes(stacks, 100), (std::vector<int64_t>{10, 20, 25}));
  EXPECT_EQ(CommonTimes(stacks, 2), (std::vector<int64_t>{10, 25}));
  EXPECT_EQ(LiveBytesAt({{20, 5, 1}}, {10, 20, 25}), (std::vector<double>{0, 5, 5}));
}

}  // namespace
}  // namespace drip::diagnoser
