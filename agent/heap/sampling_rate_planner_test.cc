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

TEST(SamplingRatePlannerTest, WaitsForEnoughWindowTimeAndIgnoresSmallChanges) {
  SamplingRatePlanner planner({});
  EXPECT_FALSE(planner.Update(0.2, 10'000'000).has_value());  // too short to measure
  // 50 MB/s wants 50 KB: within 2x of the initial 64 KiB, no change.
  EXPECT_FALSE(planner.Update(1.0, 50'000'000).has_value());
  ASSERT_EQ(planner.Update(2.0, 50'000'000 + 30'000'000), 16384u);  // 30 KB -> 16 KiB
  // 25 KB wanted: above 16 KiB but within 2x of it, not a change.
  EXPECT_FALSE(planner.Update(3.0, 80'000'000 + 25'000'000).has_value());
  EXPECT_EQ(planner.mean_bytes(), 16384u);
  // Well under half: a change.
  EXPECT_EQ(planner.Update(4.0, 105'000'000 + 6'000'000), 4096u);
}

TEST(SamplingRatePlannerTest, NoAllocationsDropToTheFloor) {
  SamplingRatePlanner planner({});
  EXPECT_EQ(planner.Update(1.0, 0), 256u);
  EXPECT_FALSE(planner.Update(2.0, 0).has_value());
}

}  // namespace
}  // namespace drip::agent
