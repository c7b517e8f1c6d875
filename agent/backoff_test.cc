#include "agent/backoff.h"

#include <gtest/gtest.h>

namespace drip::agent {
namespace {

using std::chrono::milliseconds;

TEST(BackoffTest, CapDoublesFromInitialUpToMax) {
  Backoff backoff(milliseconds(100), milliseconds(1000), /*seed=*/1);
  const milliseconds expected_caps[] = {milliseconds(100), milliseconds(200),  milliseconds(400),
                                        milliseconds(800), milliseconds(1000), milliseconds(1000)};
  for (milliseconds cap : expected_caps) {
    EXPECT_EQ(backoff.cap(), cap);
    milliseconds delay = backoff.NextDelay();
    EXPECT_GE(delay, milliseconds(0));
    EXPECT_LE(delay, cap);
  }
}

TEST(BackoffTest, ResetStartsOverAtInitial) {
  Backoff backoff(milliseconds(100), milliseconds(1000), /*seed=*/1);
  for (int i = 0; i < 10; ++i) backoff.NextDelay();
  EXPECT_EQ(backoff.cap(), milliseconds(1000));
  backoff.Reset();
  EXPECT_EQ(backoff.cap(), milliseconds(100));
  EXPECT_LE(backoff.NextDelay(), milliseconds(100));
}

TEST(BackoffTest, DelaysAreJitteredAcrossTheWholeRange) {
  // Full jitter: over 1000 draws under a 1000 ms cap, some land in the lowest and some
  // in the highest tenth. Each misses with probability 0.9^1000 (about 1e-46).
  Backoff backoff(milliseconds(1000), milliseconds(1000), /*seed=*/42);
  bool low = false;
  bool high = false;
  for (int i = 0; i < 1000; ++i) {
    milliseconds d = backoff.NextDelay();
    low = low || d < milliseconds(100);
    high = high || d > milliseconds(900);
  }
  EXPECT_TRUE(low);
  EXPECT_TRUE(high);
}

}  // namespace
}  // namespace drip::agent
