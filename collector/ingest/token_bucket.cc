#include "collector/ingest/token_bucket.h"

#include <algorithm>

namespace drip::collector {

TokenBucket::TokenBucket(double rate, double burst)
    : rate_(rate), burst_(std::max(burst, 1.0)), tokens_(burst_) {}

std::chrono::nanoseconds TokenBucket::Take(double tokens,
                                           std::chrono::steady_clock::time_point now) {
  if (unlimited()) return std::chrono::nanoseconds(0);
  if (started_ && now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
  }
  started_ = true;
  last_ = std::max(last_, now);
  tokens_ -= tokens;
  if (tokens_ >= 0) return std::chrono::nanoseconds(0);
  return std::chrono::nanoseconds(static_cast<int64_t>(-tokens_ / rate_ * 1e9));
}

}  // namespace drip::collector
