// HostRateLimits: the per-host ingest rate limit (ingest.max_samples_per_second_per_host)
// kept per host, not per stream. A stream's own bucket started full, so an agent that
// reconnected after every batch got a fresh burst each time and was never slowed; the host's
// bucket now outlives its streams, and a reconnect finds it as the last stream left it.
//
// Thread-safe: a host's old and new streams may overlap for a moment.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "collector/ingest/token_bucket.h"

namespace drip::collector {

class HostRateLimits {
 public:
  // `rate` samples per second per host (0: unlimited), at most `burst` saved up. Buckets
  // are forgotten once there are more than `max_hosts` and a bucket has been idle long
  // enough to be full again, which forgets nothing.
  HostRateLimits(double rate, double burst, size_t max_hosts = 1 << 20);

  // Takes `samples` from `host`'s bucket at `now`; how long that host's stream must wait
  // before its next message is read (zero while not in debt).
  std::chrono::nanoseconds Take(const std::string& host, double samples,
                                std::chrono::steady_clock::time_point now);

  bool unlimited() const { return rate_ <= 0; }
  size_t size() const;

 private:
  struct Entry {
    TokenBucket bucket;
    std::chrono::steady_clock::time_point last_used;
  };
  void ForgetFullBucketsLocked(std::chrono::steady_clock::time_point now);

  const double rate_;
  const double burst_;
  const size_t max_hosts_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, Entry> buckets_;
};

}  // namespace drip::collector
