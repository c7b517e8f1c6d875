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

TEST(SamplingRatePlannerTest, FastAllocatorIsCappedAtTheCeiling) {
  SamplingRatePlanner planner({});
  EXPECT_EQ(planner.Update(1.0, 4'000'000'000ull), 512u * 1024);
}

TEST(SamplingRatePlannerTest, WaitsForEnoughWindowTimeAndIgnoresSmallChanges) {
  SamplingRatePlanner planner({});
  EXPECT_FALSE(planner.Update(0.2, 10'000'000).has_value());  // too short to measure
  ASSERT_EQ(planner.Update(1.0, 50'000'000), 32768u);         // 50 MB/s -> 50 KB -> 32 KiB
  // A rate 1.5x higher asks for the same power of two or the next: not a change.
  EXPECT_FALSE(planner.Update(2.0, 50'000'000 + 60'000'000).has_value());
  EXPECT_EQ(planner.mean_bytes(), 32768u);
  // Four times lower: a change.
  EXPECT_EQ(planner.Update(3.0, 110'000'000 + 12'000'000), 8192u);
}

TEST(SamplingRatePlannerTest, NoAllocationsDropToTheFloor) {
  SamplingRatePlanner planner({});
  EXPECT_EQ(planner.Update(1.0, 0), 256u);
  EXPECT_FALSE(planner.Update(2.0, 0).has_value());
}

}  // namespace
}  // namespace drip::agent
