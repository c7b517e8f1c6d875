// FleetRunStats: what the fleet load benchmark's streams count while they run —
// batches due, sent and acknowledged per second of the run, and one latency record per
// acknowledged batch — for the periodic lines and the final figures.
//
// Thread-safe: every stream's gRPC reactions and the scheduler write into it while the
// main thread reads. Counters are atomics indexed by the second of the run; latency
// records go into one vector under a mutex (a few thousand appends a second, each a
// handful of bytes, so a lock costs nothing next to the gRPC work around it).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace drip::bench {

using FleetClock = std::chrono::steady_clock;

struct AckLatency {
  float ack_seconds;  // when the ack arrived, seconds since the run's start
  float write_ms;     // from handing the batch to gRPC to the ack that covers it
  float due_ms;       // from when the batch was due (its samples' timestamp) to that ack
};

class FleetRunStats {
 public:
  // Counts seconds [0, max_seconds) from `start`; later events count in the last second.
  FleetRunStats(FleetClock::time_point start, int max_seconds);

  FleetClock::time_point start() const { return start_; }
  double SecondsAt(FleetClock::time_point t) const;

  void CountDue(FleetClock::time_point t) {
    CountersAt(t).due.fetch_add(1, std::memory_order_relaxed);
  }
  void CountSent(FleetClock::time_point t) {
    CountersAt(t).sent.fetch_add(1, std::memory_order_relaxed);
  }
  void CountAcked(FleetClock::time_point t, uint64_t batches) {
    CountersAt(t).acked.fetch_add(batches, std::memory_order_relaxed);
  }
  void Record(const AckLatency* records, size_t n);

  struct Second {
    uint64_t due = 0, sent = 0, acked = 0;
  };
  // Sums over the whole seconds in [from, to) (seconds since start).
  Second Sum(int from, int to) const;
  // Records appended since *cursor (an index into the log), advancing it.
  std::vector<AckLatency> RecordsSince(size_t* cursor) const;

 private:
  struct Counters {
    std::atomic<uint64_t> due{0}, sent{0}, acked{0};
  };
  Counters& CountersAt(FleetClock::time_point t);

  const FleetClock::time_point start_;
  const int max_seconds_;
  std::unique_ptr<Counters[]> slots_;
  mutable std::mutex mu_;
  std::vector<AckLatency> log_;
};

}  // namespace drip::bench
