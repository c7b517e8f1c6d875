#include "agent/heap/live_heap_tracker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "agent/heap/duty_cycle_controller.h"

namespace drip::agent {
namespace {

std::vector<StackFrame> Frames(const std::string& function) {
  StackFrame frame;
  frame.function = function;
  return {frame};
}

// Frees watched a tenth of the time (attach mode cycling the free probes on a busy
// target): sampling windows of 0.5 s every 10 s, the frees watched for 1 s from each
// window's opening. A cache's entries (exponential lives of 6 s on average) mostly die
// unseen; a leak's never die. The cache's estimated live count at the end follows what is
// really live, from the deaths the watches did see; the leak's stays all it allocated.
TEST(LiveHeapTrackerTest, ObjectsFreedWhileTheFreesWereNotWatchedAreEstimatedFromTheWatchedDeaths) {
  LiveHeapTracker tracker;
  const uint64_t cache = tracker.AddStack({0x1}, Frames("cache"));
  const uint64_t leak = tracker.AddStack({0x2}, Frames("leak"));
  struct Entry {
    uint64_t address;
    int64_t dies_ms;
  };
  std::vector<Entry> entries;
  uint64_t next_address = 0x1000;
  uint64_t random = 12345;
  auto uniform = [&random] {
    random = random * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(random >> 11) + 0.5) / static_cast<double>(1ULL << 53);
  };
  constexpr int64_t kEndMs = 120'000;
  int64_t leaked = 0;
  for (int64_t t = 0; t < kEndMs; t += 10) {
    const int64_t in_cycle = t % 10'000;
    tracker.SetFreesWatched(in_cycle < 1000, t);
    // Deaths: seen only while watched.
    for (auto it = entries.begin(); it != entries.end();) {
      if (it->dies_ms > t) {
        ++it;
        continue;
      }
      if (in_cycle < 1000) tracker.OnFree(it->address, t);
      it = entries.erase(it);
    }
    if (in_cycle < 500) {  // a sampling window: 2 cache entries and 1 leaked object per tick
      for (int i = 0; i < 2; ++i) {
        const uint64_t address = next_address++;
        tracker.OnAlloc(cache, address, 64, 0, t);
        entries.push_back({address, t + static_cast<int64_t>(-6000 * std::log(uniform()))});
      }
      tracker.OnAlloc(leak, next_address++, 64, 0, t);
      ++leaked;
    }
  }
  tracker.TakePoint(kEndMs);
  const auto truly_live = static_cast<double>(entries.size());
  const std::vector<SnapshotStack> stacks = tracker.StacksWithCohorts(0, kEndMs);
  const LivePoint& cached = tracker.stacks()[cache - 1].series.back();
  // Unseen deaths left as live would count several times what is live.
  ASSERT_GT(tracker.live_objects_tracked() - leaked, 3 * truly_live);
  EXPECT_NEAR(static_cast<double>(cached.live_allocs), truly_live, 0.25 * truly_live + 5);
  EXPECT_EQ(tracker.stacks()[leak - 1].series.back().live_allocs, leaked);
  EXPECT_EQ(stacks[leak - 1].freed_bytes, 0);
  EXPECT_GT(stacks[cache - 1].freed_bytes, tracker.stacks()[cache - 1].freed_bytes);
  int64_t cohort_live = 0;
  for (const AllocationCohort& c : stacks[cache - 1].cohorts) cohort_live += c.live;
  EXPECT_NEAR(static_cast<double>(cohort_live), truly_live, 0.25 * truly_live + 5);
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

// Cohorts: the window in eighths by allocation time, each with its sampled allocations
// and how many are live at the end — also after a long window has widened the buckets the
// allocation times are kept in.
TEST(LiveHeapTrackerTest, CohortsCountAllocationsAndSurvivorsByAllocationTime) {
  for (int64_t window_ms : {8'000, 800'000}) {
    LiveHeapTracker tracker;
    const uint64_t id = tracker.AddStack({0x1000}, Frames("cache"));
    const int64_t start = 1'000'000;
    const int64_t step = window_ms / 80;
    uint64_t address = 0x1000;
    // Ten allocations in each eighth; in the first eighth all but one are freed, in the
    // second half none are.
    for (int i = 0; i < 80; ++i) {
      const int64_t t = start + step / 2 + i * step;
      tracker.OnAlloc(id, ++address, 64, 0, t);
      if (i < 9) tracker.OnFree(address, t + 1);
    }
    const std::vector<SnapshotStack> stacks = tracker.StacksWithCohorts(start, start + window_ms);
    ASSERT_EQ(stacks[0].cohorts.size(), LiveHeapTracker::kCohorts) << window_ms;
    EXPECT_EQ(stacks[0].cohorts[0].allocs, 10) << window_ms;
    EXPECT_EQ(stacks[0].cohorts[0].live, 1) << window_ms;
    for (size_t c = 1; c < LiveHeapTracker::kCohorts; ++c) {
      EXPECT_EQ(stacks[0].cohorts[c].allocs, 10) << window_ms << " " << c;
      EXPECT_EQ(stacks[0].cohorts[c].live, 10) << window_ms << " " << c;
    }
    EXPECT_TRUE(tracker.stacks()[0].cohorts.empty());  // only the copy carries them
  }
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

TEST(LiveHeapTrackerTest, WindowWeightScalesItsAllocationsUntilItIsFinal) {
  LiveHeapTracker tracker;
  const uint64_t id = tracker.AddStack({1}, Frames("f"));
  // mean_bytes 0: every allocation recorded, each 1000 bytes times its window's weight.
  tracker.OnAlloc(id, 0xa0, 1000, 0, 1000, /*window=*/1);
  tracker.OnAlloc(id, 0xb0, 1000, 0, 1000, /*window=*/1);
  tracker.OnAlloc(id, 0xc0, 1000, 0, 1000, /*window=*/0);  // not duty-cycled: weighs 1
  tracker.TakePoint(1000);
  EXPECT_EQ(tracker.stacks()[0].series.back().live_bytes, 3000);

  tracker.SetWindowWeight(1, 3);
  tracker.TakePoint(2000);
  EXPECT_EQ(tracker.stacks()[0].series.back().live_bytes, 7000);
  EXPECT_EQ(tracker.stacks()[0].series.back().live_allocs, 7);
  // A free takes off the weight its window has now; a re-weighting after it moves the
  // freed bytes too, so that live = allocated - freed.
  tracker.OnFree(0xa0, 2500);
  tracker.SetWindowWeight(1, 4, /*final=*/true);
  tracker.TakePoint(3000);
  const SnapshotStack& stack = tracker.stacks()[0];
  EXPECT_EQ(stack.series.back().live_bytes, 5000);
  EXPECT_EQ(stack.allocated_bytes, 9000);
  EXPECT_EQ(stack.freed_bytes, 4000);

  // Final: later settings are ignored, and late events of the window weigh its weight.
  tracker.SetWindowWeight(1, 100);
  tracker.OnAlloc(id, 0xd0, 1000, 0, 3500, /*window=*/1);
  tracker.TakePoint(4000);
  EXPECT_EQ(tracker.stacks()[0].series.back().live_bytes, 9000);
  EXPECT_EQ(tracker.stacks()[0].sampled_allocs, 4);
}

// The duty cycle's weighting error, reproduced without a kernel: a steady leak of 1000
// objects a second, sampled only in windows that are cut short at different lengths and
// spaced out by slow detaches. Weighted by the on-time each window really had
// (DutyCycleController), the estimate follows the leak at every read-out; weighted by a
// planned share of a 1 s period, it fell below it for every window cut short and the leak
// looked as if it were levelling off.
TEST(LiveHeapTrackerTest, SteadyLeakSampledInCutShortWindowsStaysOnItsLine) {
  DutyCycleController duty({.cpu_budget = 0.05, .probe_hit_cost_ns = 5000});
  LiveHeapTracker tracker;
  const uint64_t id = tracker.AddStack({1}, Frames("leak"));
  // Windows as (open, close) seconds: all planned for a second, cut at 0.6, 0.1, 0.35...
  const std::vector<std::pair<double, double>> windows = {
      {0.0, 0.6}, {1.0, 1.1}, {2.5, 2.85}, {4.0, 4.2}, {4.2, 4.4}, {6.0, 6.05}, {7.5, 8.5}};
  size_t next = 0;
  uint64_t address = 0x1000;
  double worst = 0;
  for (int ms = 0; ms < 9000; ++ms) {
    const double t = ms / 1000.0;
    if (duty.window_open() && t >= windows[next].second) {
      duty.CloseWindow(t);
      ++next;
    }
    if (!duty.window_open() && next < windows.size() && t >= windows[next].first) {
      const uint32_t previous = duty.latest_window();
      duty.OpenWindow(t);
      if (previous != 0) tracker.SetWindowWeight(previous, duty.WindowWeight(previous, t), true);
    }
    // One 100-byte object a millisecond, never freed; the sampler sees it in a window.
    if (duty.window_open()) tracker.OnAlloc(id, address++, 100, 0, ms, duty.latest_window());
    if (ms % 250 == 249) {
      tracker.SetWindowWeight(duty.latest_window(),
                              duty.WindowWeight(duty.latest_window(), t + 0.001));
      tracker.TakePoint(ms + 1);
      const double truth = 100.0 * (ms + 1);
      const double estimate = static_cast<double>(tracker.stacks()[0].series.back().live_bytes);
      worst = std::max(worst, std::fabs(estimate - truth) / truth);
    }
  }
  EXPECT_LT(worst, 0.01);
}

}  // namespace
}  // namespace drip::agent
