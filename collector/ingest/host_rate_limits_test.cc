#include "collector/ingest/host_rate_limits.h"

#include <gtest/gtest.h>

namespace drip::collector {
namespace {

using std::chrono::seconds;

// An agent that reconnects after each batch must not get a fresh burst each time: the
// bucket belongs to the host, so its next stream starts in the debt the last one left.
TEST(HostRateLimitsTest, AReconnectingHostFindsItsBucketAsItsLastStreamLeftIt) {
  HostRateLimits limits(/*rate=*/1000, /*burst=*/2000);
  const auto t0 = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  EXPECT_EQ(limits.Take("web-1", 2000, t0).count(), 0);  // the burst
  // 3000 more at once: 3 s of debt, whichever stream the batch arrived on.
  EXPECT_EQ(limits.Take("web-1", 3000, t0), seconds(3));
  // A new stream of the same host, a moment later: still in debt.
  EXPECT_GT(limits.Take("web-1", 1, t0 + std::chrono::milliseconds(10)).count(), 0);
  // Another host has its own bucket.
  EXPECT_EQ(limits.Take("web-2", 2000, t0).count(), 0);
  EXPECT_EQ(limits.size(), 2u);
}

TEST(HostRateLimitsTest, ZeroRateIsUnlimitedAndKeepsNoState) {
  HostRateLimits limits(0, 0);
  EXPECT_TRUE(limits.unlimited());
  EXPECT_EQ(limits.Take("web-1", 1e9, std::chrono::steady_clock::now()).count(), 0);
  EXPECT_EQ(limits.size(), 0u);
}

// Past `max_hosts`, buckets idle long enough to be full again are forgotten (a new bucket
// starts full, so nothing changes for their hosts); a host still in debt is kept.
TEST(HostRateLimitsTest, PastItsHostLimitForgetsOnlyBucketsThatAreFullAgain) {
  HostRateLimits limits(/*rate=*/100, /*burst=*/100, /*max_hosts=*/2);
  const auto t0 = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  limits.Take("idle", 100, t0);
  limits.Take("busy", 1100, t0 + seconds(60));  // 10 s of debt, just now
  limits.Take("new", 1, t0 + seconds(61));
  EXPECT_EQ(limits.size(), 2u);
  EXPECT_GT(limits.Take("busy", 1, t0 + seconds(62)).count(), 0);
}

}  // namespace
}  // namespace drip::collector
