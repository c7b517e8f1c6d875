#include "bench/fleet_scheduler.h"

namespace drip::bench {

FleetScheduler::FleetScheduler(std::chrono::nanoseconds interval, FleetRunStats* stats)
    : interval_(interval), stats_(stats), thread_([this] { Run(); }) {}

FleetScheduler::~FleetScheduler() { Stop(); }

void FleetScheduler::Add(FleetAgentStream* stream, FleetClock::time_point first_due) {
  std::lock_guard<std::mutex> lock(mu_);
  heap_.push(Entry{first_due, stream});
  wake_.notify_one();
}

void FleetScheduler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void FleetScheduler::Run() {
  std::vector<FleetAgentStream*> due;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (heap_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const FleetClock::time_point now = FleetClock::now();
    if (heap_.top().due > now) {
      wake_.wait_until(lock, heap_.top().due);
      continue;
    }
    while (!heap_.empty() && heap_.top().due <= now) {
      Entry e = heap_.top();
      heap_.pop();
      due.push_back(e.stream);
      e.due += interval_;
      heap_.push(e);
    }
    // Outside the lock: Due() encodes and starts a write under the stream's own lock.
    lock.unlock();
    for (FleetAgentStream* stream : due) {
      stream->Due();
      stats_->CountDue(now);
    }
    due.clear();
    lock.lock();
  }
}

}  // namespace drip::bench
