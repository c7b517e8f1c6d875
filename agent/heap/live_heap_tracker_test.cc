#include "agent/heap/live_heap_tracker.h"

#include <gtest/gtest.h>

#include <cmath>

namespace drip::agent {
namespace {

std::vector<StackFrame> Frames(const std::string& function) {
  StackFrame frame;
  frame.function = function;
  return {frame};
}

TEST(LiveHeapTrackerTest, SampledAllocationCountsItsPoissonWeight) {
  LiveHeapTracker tracker;
  const uint64_t id = tracker.AddStack({0x1000, 0x2000}, Frames("leak"));
  // 1 KiB sampled at T = 512 KiB: p = 1 - exp(-1/512), weight = 1024 / p ≈ 524,800 bytes.
  tracker.OnAlloc(id, 0xa0, 1024, 512 * 1024, 1000);
  tracker.TakePoint(1000);
  const double p = -std::expm1(-1024.0 / (512 * 1024));
  ASSERT_EQ(tracker.stacks().size(), 1u);
  const LivePoint& point = tracker.stacks()[0].series.back();
  EXPECT_NEAR(point.live_bytes, 1024 / p, 1);
  EXPECT_NEAR(point.live_allocs, 1 / p, 1);
}

TEST(LiveHeapTrackerTest, FreeTakesTheSameWeightOff) {
  LiveHeapTracker tracker;
  const uint64_t id = tracker.AddStack({0x1000}, Frames("transient"));
  tracker.OnAlloc(id, 0xa0, 4096, 65536, 1000);
  tracker.OnFree(0xa0, 1001);
  tracker.TakePoint(1002);
  const SnapshotStack& stack = tracker.stacks()[0];
  EXPECT_EQ(stack.series.back().live_bytes, 0);
  EXPECT_EQ(stack.sampled_allocs, 1);
  EXPECT_EQ(stack.sampled_frees, 1);
  EXPECT_EQ(stack.allocated_bytes, stack.freed_bytes);
}

TEST(LiveHeapTrackerTest, FreeOfAnUntrackedAddressIsIgnored) {
  LiveHeapTracker tracker;
  const uint64_t id = tracker.AddStack({0x1000}, Frames("f"));
  tracker.OnAlloc(id, 0xa0, 4096, 4096, 1000);
  tracker.OnFree(0xbeef, 1001);
  tracker.TakePoint(1002);
  EXPECT_GT(tracker.stacks()[0].series.back().live_bytes, 0);
  EXPECT_EQ(tracker.stacks()[0].sampled_frees, 0);
}

TEST(LiveHeapTrackerTest, SameStackIsInternedOnce) {
  LiveHeapTracker tracker;
  const uint64_t a = tracker.AddStack({1, 2, 3}, Frames("f"));
  EXPECT_EQ(tracker.FindStack({1, 2, 3}), a);
  EXPECT_EQ(tracker.AddStack({1, 2, 3}, Frames("f")), a);
  EXPECT_EQ(tracker.FindStack({1, 2}), 0u);
  EXPECT_EQ(tracker.stacks().size(), 1u);
}

TEST(LiveHeapTrackerTest, StackSeenLateHasZeroPointsBeforeIt) {
  LiveHeapTracker tracker;
  tracker.TakePoint(1000);
  tracker.TakePoint(2000);
  const uint64_t id = tracker.AddStack({7}, Frames("late"));
  tracker.OnAlloc(id, 0xa0, 100, 100, 2500);
  tracker.TakePoint(3000);
  const auto& series = tracker.stacks()[0].series;
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series[0].t_ms, 1000);
  EXPECT_EQ(series[0].live_bytes, 0);
  EXPECT_GT(series[2].live_bytes, 0);
}

TEST(LiveHeapTrackerTest, AddressReusedWithoutASeenFreeReplacesTheOldObject) {
  LiveHeapTracker tracker;
  const uint64_t a = tracker.AddStack({1}, Frames("a"));
  const uint64_t b = tracker.AddStack({2}, Frames("b"));
  tracker.OnAlloc(a, 0xa0, 4096, 4096, 1000);
  tracker.OnAlloc(b, 0xa0, 4096, 4096, 1001);
  tracker.TakePoint(1002);
  EXPECT_EQ(tracker.stacks()[0].series.back().live_bytes, 0);
  EXPECT_GT(tracker.stacks()[1].series.back().live_bytes, 0);
}

TEST(LiveHeapTrackerTest, StacksBeyondTheLimitGoToOneOverflowStack) {
  LiveHeapTracker tracker(/*max_stacks=*/2);
  tracker.AddStack({1}, Frames("a"));
  tracker.AddStack({2}, Frames("b"));
  const uint64_t c = tracker.AddStack({3}, Frames("c"));
  const uint64_t d = tracker.AddStack({4}, Frames("d"));
  EXPECT_EQ(c, d);
  EXPECT_EQ(tracker.stacks().back().frames[0].function, "[other stacks]");
}

}  // namespace
}  // namespace drip::agent
