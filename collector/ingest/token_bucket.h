// TokenBucket: the per-host ingest rate limit (ingest.max_samples_per_second_per_host).
// A stream takes one token per sample it had stored; the bucket refills at `rate` tokens
// per second up to `burst`. A batch is never refused for the rate: the bucket goes into
// debt and says how long the stream must wait before its next message is read, so a
// flooding agent is slowed by HTTP/2 flow control (it buffers, as during any outage)
// while every other host's stream is read as before.
//
// Not thread-safe: HostRateLimits keeps one per host and uses it under its lock.
#pragma once

#include <chrono>

namespace drip::collector {

class TokenBucket {
 public:
  // `rate` tokens per second (0: unlimited), at most `burst` saved up. Starts full.
  TokenBucket(double rate, double burst);

  // Takes `tokens` at `now` and returns how long the caller must wait before taking
  // more (zero while the bucket is not in debt).
  std::chrono::nanoseconds Take(double tokens, std::chrono::steady_clock::time_point now);

  bool unlimited() const { return rate_ <= 0; }

 private:
  double rate_;
  double burst_;
  double tokens_;
  std::chrono::steady_clock::time_point last_{};
  bool started_ = false;
};

}  // namespace drip::collector
