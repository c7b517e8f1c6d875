#include "diagnoser/live_series.h"

#include <algorithm>

namespace drip::diagnoser {

std::vector<LivePoint> SumSeries(const std::vector<LivePoint>& a, const std::vector<LivePoint>& b) {
  std::vector<LivePoint> out;
  out.reserve(std::max(a.size(), b.size()));
  size_t i = 0, j = 0;
  LivePoint last_a, last_b;  // the value each holds; zero before its first read-out
  while (i < a.size() || j < b.size()) {
    int64_t t;
    if (j >= b.size() || (i < a.size() && a[i].t_ms <= b[j].t_ms)) {
      t = a[i].t_ms;
    } else {
      t = b[j].t_ms;
    }
    if (i < a.size() && a[i].t_ms == t) last_a = a[i++];
    if (j < b.size() && b[j].t_ms == t) last_b = b[j++];
    out.push_back(
        {t, last_a.live_bytes + last_b.live_bytes, last_a.live_allocs + last_b.live_allocs});
  }
  return out;
}

std::vector<int64_t> CommonTimes(const std::vector<SnapshotStack>& stacks, size_t max_points) {
  std::vector<int64_t> times;
  for (const SnapshotStack& s : stacks) {
    for (const LivePoint& p : s.series) times.push_back(p.t_ms);
    // Stacks usually share the agent's read-out times; keep the union small as we go.
    if (times.size() > 4 * max_points + 1024) {
      std::sort(times.begin(), times.end());
      times.erase(std::unique(times.begin(), times.end()), times.end());
    }
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  if (times.size() <= max_points || max_points < 2) return times;
  const int64_t first = times.front(), last = times.back();
  std::vector<int64_t> even(max_points);
  for (size_t k = 0; k < max_points; ++k) {
    even[k] =
        first + static_cast<int64_t>(static_cast<double>(last - first) * static_cast<double>(k) /
                                     static_cast<double>(max_points - 1));
  }
  even.back() = last;
  return even;
}

std::vector<double> LiveBytesAt(const std::vector<LivePoint>& series,
                                const std::vector<int64_t>& times) {
  std::vector<double> out(times.size(), 0.0);
  size_t j = 0;
  double held = 0;
  for (size_t k = 0; k < times.size(); ++k) {
    while (j < series.size() && series[j].t_ms <= times[k]) {
      held = static_cast<double>(series[j].live_bytes);
      ++j;
    }
    out[k] = held;
  }
  return out;
}

}  // namespace drip::diagnoser
