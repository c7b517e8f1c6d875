#include "collector/ingest/host_rate_limits.h"

#include <algorithm>

namespace drip::collector {

HostRateLimits::HostRateLimits(double rate, double burst, size_t max_hosts)
    : rate_(rate), burst_(burst), max_hosts_(std::max<size_t>(max_hosts, 1)) {}

std::chrono::nanoseconds HostRateLimits::Take(const std::string& host, double samples,
                                              std::chrono::steady_clock::time_point now) {
  if (unlimited()) return std::chrono::nanoseconds(0);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = buckets_.find(host);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_hosts_) ForgetFullBucketsLocked(now);
    it = buckets_.emplace(host, Entry{TokenBucket(rate_, burst_), now}).first;
  }
  it->second.last_used = now;
  return it->second.bucket.Take(samples, now);
}

void HostRateLimits::ForgetFullBucketsLocked(std::chrono::steady_clock::time_point now) {
  // Idle for longer than an empty bucket takes to refill: full again, as a new one starts.
  const auto refill = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(burst_ / rate_ + 1));
  absl::erase_if(buckets_,
                 [&](const auto& entry) { return now - entry.second.last_used > refill; });
}

size_t HostRateLimits::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return buckets_.size();
}

}  // namespace drip::collector
