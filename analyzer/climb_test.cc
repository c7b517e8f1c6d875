#include "analyzer/climb.h"

#include <gtest/gtest.h>

#include <cmath>

namespace drip::analyzer {
namespace {

TEST(ClimbTest, LinearRiseIsSteadyAndStillRising) {
  Climb climb;
  climb.Start(0, 100);
  for (int i = 1; i <= 200; ++i) ASSERT_TRUE(climb.Add(i * 900, 100 + i / 4, 2));
  EXPECT_EQ(climb.rise(), 50);
  EXPECT_GT(climb.Steadiness(BucketScale(0.0025)), 0.8);
  EXPECT_TRUE(climb.StillRising(200 * 900, 3 * 3600));
}

TEST(ClimbTest, StepIsNotSteady) {
  Climb climb;
  climb.Start(0, 100);
  for (int i = 1; i <= 60; ++i) ASSERT_TRUE(climb.Add(i * 900, i < 50 ? 100 : 140, 2));
  EXPECT_EQ(climb.rise(), 40);
  EXPECT_LT(climb.Steadiness(BucketScale(0.0025)), 0.3);
}

TEST(ClimbTest, FallBeyondToleranceEndsIt) {
  Climb climb;
  climb.Start(0, 100);
  ASSERT_TRUE(climb.Add(900, 110, 2));
  EXPECT_TRUE(climb.Add(1800, 108, 2));
  EXPECT_FALSE(climb.Add(2700, 107, 2));
  EXPECT_FALSE(climb.active());
}

TEST(ClimbTest, LevelledOffClimbIsNotStillRising) {
  Climb climb;
  climb.Start(0, 100);
  for (int i = 1; i <= 16; ++i) climb.Add(i * 900, 100 + i, 2);  // 4 h of rise
  for (int i = 17; i <= 96; ++i) climb.Add(i * 900, 116, 2);     // 20 h flat
  EXPECT_FALSE(climb.StillRising(96 * 900, 3 * 3600));
}

TEST(ClimbTest, StaysBoundedOverLongClimbs) {
  Climb climb;
  climb.Start(0, 0);
  for (int i = 1; i <= 100000; ++i) climb.Add(i * 60, i / 100, 2);
  EXPECT_NEAR(climb.BucketAt(50000 * 60), 500, 30);
  EXPECT_LE(sizeof(Climb), 160u);
}

}  // namespace
}  // namespace drip::analyzer
