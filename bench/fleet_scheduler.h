// FleetScheduler: the fleet load benchmark's clock. Each welcomed stream is due a batch
// every `interval` from its first due time; one thread sleeps until the earliest due
// time, tells that stream (FleetAgentStream::Due) and counts it as offered.
//
// One thread and a heap rather than a timer per stream: a thousand streams at one batch
// a second are a thousand wake-ups a second at most, and the thread batches whatever
// fell due while it slept. A stream's due times are fixed at first_due + k × interval,
// so a late wake-up (a busy machine) delays batches without shifting later ones; the
// due-to-ack latency shows it.
//
// Thread-safe. Stop() before the streams are destroyed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "bench/fleet_agent_stream.h"
#include "bench/fleet_run_stats.h"

namespace drip::bench {

class FleetScheduler {
 public:
  FleetScheduler(std::chrono::nanoseconds interval, FleetRunStats* stats);
  ~FleetScheduler();  // Stop()s

  // `stream` is due a batch at `first_due` and every interval after it.
  void Add(FleetAgentStream* stream, FleetClock::time_point first_due);
  // No batch falls due after this returns.
  void Stop();

 private:
  struct Entry {
    FleetClock::time_point due;
    FleetAgentStream* stream;
    bool operator>(const Entry& other) const { return due > other.due; }
  };
  void Run();

  const std::chrono::nanoseconds interval_;
  FleetRunStats* const stats_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace drip::bench
