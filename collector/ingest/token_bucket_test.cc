#include "collector/ingest/token_bucket.h"

#include "gtest/gtest.h"

namespace drip::collector {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST(TokenBucketTest, BurstPassesWithoutWaiting) {
  TokenBucket bucket(1000, 5000);
  const auto t0 = std::chrono::steady_clock::time_point(seconds(100));
  EXPECT_EQ(bucket.Take(5000, t0), nanoseconds(0));
}

TEST(TokenBucketTest, DebtIsPaidBackAtTheRate) {
  TokenBucket bucket(1000, 1000);
  const auto t0 = std::chrono::steady_clock::time_point(seconds(100));
  // 3000 samples against a full bucket of 1000: 2000 in debt, 2 s at 1000/s.
  EXPECT_EQ(bucket.Take(3000, t0), seconds(2));
  // Having waited exactly that long, the next small batch is only its own cost.
  EXPECT_EQ(bucket.Take(500, t0 + seconds(2)), milliseconds(500));
}

TEST(TokenBucketTest, IdleTimeRefillsOnlyUpToTheBurst) {
  TokenBucket bucket(100, 200);
  const auto t0 = std::chrono::steady_clock::time_point(seconds(100));
  EXPECT_EQ(bucket.Take(200, t0), nanoseconds(0));
  // An hour idle saves 200 tokens, not 360000.
  EXPECT_EQ(bucket.Take(200, t0 + seconds(3600)), nanoseconds(0));
  EXPECT_EQ(bucket.Take(100, t0 + seconds(3600)), seconds(1));
}

TEST(TokenBucketTest, ZeroRateIsUnlimited) {
  TokenBucket bucket(0, 0);
  EXPECT_TRUE(bucket.unlimited());
  EXPECT_EQ(bucket.Take(1e9, std::chrono::steady_clock::now()), nanoseconds(0));
}

}  // namespace
}  // namespace drip::collector
