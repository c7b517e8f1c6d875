// LoopThread: the collector's background loops — storage maintenance and the leak
// pipeline — each a named thread that runs one round, waits what the round asks, and
// goes again until stopped; and says when it last completed a round, which the systemd
// watchdog reads (a hung round stops the pings).
//
// Start() and Stop() from one owning thread; Stop() is idempotent and returns once the
// round in progress, if any, has completed. last_round() is thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace drip::collector {

class LoopThread {
 public:
  using Duration = std::chrono::steady_clock::duration;

  // `round` runs on the thread and returns how long to wait before the next one.
  // `name` (at most 15 characters) names the thread in ps and gdb.
  LoopThread(std::string name, std::function<Duration()> round);
  ~LoopThread();  // Stop()

  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;

  // Starts the thread; the first round runs after `first_delay`. Start() itself counts
  // as a round for last_round().
  void Start(Duration first_delay = Duration::zero());
  void Stop();
  // Runs the next round now rather than when its wait ends (or, during a round, right
  // after it). Thread-safe.
  void Wake();

  std::chrono::steady_clock::time_point last_round() const {
    return std::chrono::steady_clock::time_point(Duration(last_round_.load()));
  }

 private:
  void Run(Duration first_delay);

  const std::string name_;
  const std::function<Duration()> round_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool wake_ = false;
  std::atomic<Duration::rep> last_round_{0};
  std::thread thread_;
};

}  // namespace drip::collector
