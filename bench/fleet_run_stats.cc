#include "bench/fleet_run_stats.h"

#include <algorithm>

namespace drip::bench {

FleetRunStats::FleetRunStats(FleetClock::time_point start, int max_seconds)
    : start_(start),
      max_seconds_(std::max(max_seconds, 1)),
      slots_(std::make_unique<Counters[]>(static_cast<size_t>(max_seconds_))) {}

double FleetRunStats::SecondsAt(FleetClock::time_point t) const {
  return std::chrono::duration<double>(t - start_).count();
}

FleetRunStats::Counters& FleetRunStats::CountersAt(FleetClock::time_point t) {
  const int second = static_cast<int>(SecondsAt(t));
  return slots_[std::clamp(second, 0, max_seconds_ - 1)];
}

void FleetRunStats::Record(const AckLatency* records, size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  log_.insert(log_.end(), records, records + n);
}

FleetRunStats::Second FleetRunStats::Sum(int from, int to) const {
  Second sum;
  for (int s = std::max(from, 0); s < std::min(to, max_seconds_); ++s) {
    sum.due += slots_[s].due.load(std::memory_order_relaxed);
    sum.sent += slots_[s].sent.load(std::memory_order_relaxed);
    sum.acked += slots_[s].acked.load(std::memory_order_relaxed);
  }
  return sum;
}

std::vector<AckLatency> FleetRunStats::RecordsSince(size_t* cursor) const {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t from = std::min(*cursor, log_.size());
  std::vector<AckLatency> out(log_.begin() + static_cast<ptrdiff_t>(from), log_.end());
  *cursor = log_.size();
  return out;
}

}  // namespace drip::bench
