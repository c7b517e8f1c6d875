// Test helpers for the leak detector: one series described as a function of time, fed
// at 60 s with a little seeded noise, as an agent would sample it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "analyzer/leak_detector.h"

namespace drip::analyzer::testing {

inline constexpr int64_t kStart = 1'700'000'000;
inline constexpr int64_t kHour = 3600;
inline constexpr int64_t kDay = 24 * kHour;
inline constexpr double kMiB = 1024.0 * 1024.0;

// What a series does at time t (seconds since kStart): its instance and bytes, or a
// silence (no sample then).
struct Point {
  std::string instance;
  double bytes;
  bool silent = false;
  uint64_t limit_bytes = 0;  // the series' memory limit (0: none of its own)
  std::optional<uint64_t> oom_kills = std::nullopt;  // its cgroup's OOM kills so far, when reported
};
using Shape = std::function<Point(int64_t t)>;

// Feeds one series every `interval` seconds for `days`, with ±0.2 % noise from `seed`.
inline void Feed(LeakDetector& detector, const std::string& host, const std::string& component,
                 double days, const Shape& shape, uint32_t seed = 7, int64_t interval = 60) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, 0.002);
  for (int64_t t = 0; t < static_cast<int64_t>(days * kDay); t += interval) {
    const Point p = shape(t);
    const double jitter = noise(rng);
    if (p.silent) continue;
    // The kernel keeps a cgroup under its limit.
    double bytes = p.bytes * (1 + jitter);
    if (p.limit_bytes > 0) bytes = std::min(bytes, static_cast<double>(p.limit_bytes));
    detector.Observe(host, component, kStart + t, p.instance, static_cast<uint64_t>(bytes),
                     {p.limit_bytes, p.oom_kills});
  }
}

// The suspects of one series fed for `days` with the default config.
inline std::vector<Suspect> RunOneSeries(const Shape& shape, double days = 4) {
  LeakDetector detector{DetectorConfig{}};
  Feed(detector, "host-a", "svc:x.service", days, shape);
  detector.AdvanceTo(kStart + static_cast<int64_t>(days * kDay) + kHour);
  return detector.Suspects();
}

}  // namespace drip::analyzer::testing
