#include "agent/backoff.h"

#include <algorithm>

namespace drip::agent {

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, uint64_t seed)
    : initial_(initial), max_(std::max(initial, max)), cap_(initial), random_(seed) {}

std::chrono::milliseconds Backoff::NextDelay() {
  std::uniform_int_distribution<int64_t> jitter(0, cap_.count());
  std::chrono::milliseconds delay(jitter(random_));
  cap_ = std::min(max_, cap_ * 2);
  return delay;
}

}  // namespace drip::agent
