// Wall-clock time behind an interface so that retention, validation and backoff can be
// tested with a fake clock. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace drip {

class Clock {
 public:
  virtual ~Clock() = default;
  // Unix time in milliseconds.
  virtual int64_t NowMs() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t NowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  static const SystemClock* Get() {
    static const SystemClock clock;
    return &clock;
  }
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t now_ms) : now_ms_(now_ms) {}
  int64_t NowMs() const override { return now_ms_.load(); }
  void Set(int64_t now_ms) { now_ms_.store(now_ms); }
  void Advance(std::chrono::milliseconds d) { now_ms_.fetch_add(d.count()); }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace drip
