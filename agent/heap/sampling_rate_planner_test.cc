#include "agent/heap/sampling_rate_planner.h"

#include <gtest/gtest.h>

namespace drip::agent {
namespace {

TEST(SamplingRatePlannerTest, SlowAllocatorGetsDenseSamplingWithinTheFloor) {
  SamplingRatePlanner planner({});
  // 3.3 MB/s of allocations: 1000 samples/s want T of about 3.3 KB, kept at 2 KiB.
  auto t = planner.Update(1.0, 3'300'000);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(*t, 2048u);
  // 100 KB/s: below the floor.
  SamplingRatePlanner quiet({});
  EXPECT_EQ(quiet.Update(1.0, 100'000), 256u);
}

TEST(SamplingRatePlannerTest, FastAllocatorIsSampledAsOftenAndCappedAtTheCeiling) {
  SamplingRatePlanner planner({});
  // 4 GB/s: about 1000 samples/s at 2 MiB (4 MB rounded down to a power of two).
  EXPECT_EQ(planner.Update(1.0, 4'000'000'000ull), 2u << 20);
  SamplingRatePlanner faster({});
  EXPECT_EQ(faster.Update(1.0, 1'000'000'000'000ull), 64u << 20);
}

// Windows open 2 % of the time (a busy target's duty cycle) may sample densely: the agent
// sees 2 % of their samples per second of wall time. Up to the per-second limit.
TEST(SamplingRatePlannerTest, WindowsOpenASmallShareOfTheTimeSampleDenserUpToTheLimit) {
  SamplingRatePlanner planner({});
  // 45 MB/s: 1000 samples a second of window would be 32 KiB; 3000 (the limit) 16 KiB.
  EXPECT_EQ(planner.Update(1.0, 45'000'000, 0.02), 16384u);
  SamplingRatePlanner half({});
  // Open half the time: 2000 a second of window, 16 KiB (22 KB rounded down).
  EXPECT_EQ(half.Update(1.0, 45'000'000, 0.5), 16384u);
  SamplingRatePlanner always({});
  EXPECT_FALSE(always.Update(1.0, 45'000'000, 1.0).has_value());  // 45 KB: 64 KiB stays
  // 0.1 s of window at 45 MB/s is measure enough: 4.5 MB is 64 sampling periods and more.
  SamplingRatePlanner brief({});
  EXPECT_EQ(brief.Update(0.1, 4'500'000, 0.02), 16384u);
}

// Told the growth, the windows see only their share of it: sized for the share.
TEST(SamplingRatePlannerTest, AKnownGrowthSeenThroughShortWindowsIsSampledForItsShare) {
  // 200 KiB/s over a 16 s window, windows open 2 % of it: 64 KiB of the growth in
  // windows; 32 samples of it want T of 2 KiB, held to the limit (45 MB/s / 3000: 16 KiB).
  SamplingRatePlanner planner(
      {.expected_growth_bytes_per_second = 200 * 1024, .window_seconds = 16});
  EXPECT_EQ(planner.Update(1.0, 45'000'000, 0.02), 16384u);
  // Open all the time, 100 KiB does: 64 KiB.
  SamplingRatePlanner always(
      {.expected_growth_bytes_per_second = 200 * 1024, .window_seconds = 16});
  EXPECT_FALSE(always.Update(1.0, 45'000'000, 1.0).has_value());
}

TEST(SamplingRatePlannerTest, WaitsForEnoughWindowTimeAndIgnoresSmallChanges) {
  SamplingRatePlanner planner({});
  EXPECT_FALSE(planner.Update(0.2, 1'000'000).has_value());  // too little to measure
  // 50 MB/s wants 50 KB: within 2x of the initial 64 KiB, no change.
  EXPECT_FALSE(planner.Update(1.0, 50'000'000).has_value());
  ASSERT_EQ(planner.Update(2.0, 50'000'000 + 30'000'000), 16384u);  // 30 KB -> 16 KiB
  // 25 KB wanted: above 16 KiB but within 2x of it, not a change.
  EXPECT_FALSE(planner.Update(3.0, 80'000'000 + 25'000'000).has_value());
  EXPECT_EQ(planner.mean_bytes(), 16384u);
  // Well under half: a change.
  EXPECT_EQ(planner.Update(4.0, 105'000'000 + 6'000'000), 4096u);
}

TEST(SamplingRatePlannerTest, AKnownSlowGrowthUnderHeavyChurnSamplesDenserWithinTheCostLimit) {
  // 45 MB/s of churn: about 1000 samples/s at 32 KiB, where a 1 KiB/s leak leaves about
  // one sample in 40 s.
  SamplingRatePlanner::Config config;
  config.initial_mean_bytes = 512 * 1024;  // the shim's own default
  SamplingRatePlanner blind(config);
  EXPECT_EQ(blind.Update(1.0, 45'000'000), 32768u);
  // Told the growth, T would go to 1 KiB for 32 samples in 40 s (45 k samples/s); the
  // cost limit stops it at 15 KB, rounded up to 16 KiB (about 2,700 samples/s).
  config.expected_growth_bytes_per_second = 1024;
  config.window_seconds = 40;
  SamplingRatePlanner told(config);
  EXPECT_EQ(told.Update(1.0, 45'000'000), 16384u);
}

TEST(SamplingRatePlannerTest, AKnownFastGrowthSamplesForTheGrowthNotForTheAllocationRate) {
  // 15 MB/s of allocations growing 5 MB/s: the rate-based T samples 1000 a second; told
  // the growth, 32 samples of it in 60 s need only T = 9.4 MB, but the stacks around it
  // are still seen 20 times a second: T = 750 KB, 512 KiB as a power of two.
  SamplingRatePlanner::Config config;
  SamplingRatePlanner blind(config);
  EXPECT_EQ(blind.Update(1.0, 15'000'000), 8192u);
  config.expected_growth_bytes_per_second = 5'000'000;
  config.window_seconds = 60;
  SamplingRatePlanner told(config);
  EXPECT_EQ(told.Update(1.0, 15'000'000), 512u * 1024);
  // A leak of 50 KB/s under 1 MB/s: 32 samples in 60 s at T = 94 KB would be 10 a
  // second; at least 20 a second is T = 50 KB, within a factor two of where it starts.
  config.expected_growth_bytes_per_second = 50'000;
  SamplingRatePlanner slower(config);
  EXPECT_EQ(slower.Update(1.0, 1'000'000), std::nullopt);  // 64 KiB is where it starts
}

TEST(SamplingRatePlannerTest, NoAllocationsDropToTheFloor) {
  SamplingRatePlanner planner({});
  EXPECT_EQ(planner.Update(1.0, 0), 256u);
  EXPECT_FALSE(planner.Update(2.0, 0).has_value());
}

}  // namespace
}  // namespace drip::agent
