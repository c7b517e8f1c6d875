// Backoff: reconnect delays for the collector stream — exponential from `initial` to
// `max`, with "full jitter" (each delay uniform in [0, cap]) so that a fleet whose
// collector restarts does not reconnect in lockstep. Reset() after a stream that got
// as far as a Welcome. Not thread-safe (one reconnect loop owns it).
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace drip::agent {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, uint64_t seed);

  // The delay before the next attempt; doubles the cap for the one after, up to max.
  std::chrono::milliseconds NextDelay();
  // The cap the next NextDelay() draws under.
  std::chrono::milliseconds cap() const { return cap_; }
  void Reset() { cap_ = initial_; }

 private:
  const std::chrono::milliseconds initial_;
  const std::chrono::milliseconds max_;
  std::chrono::milliseconds cap_;
  std::mt19937_64 random_;
};

}  // namespace drip::agent
