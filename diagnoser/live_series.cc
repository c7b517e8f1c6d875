#include "diagnoser/live_series.h"

#include <algorithm>
#include <limits>

namespace drip::diagnoser {

std::vector<LivePoint> SumSeries(const std::vector<const std::vector<LivePoint>*>& series) {
  // Each series as the changes it makes to the sum, all sorted by time: one pass then
  // gives the sum at every time. (Adding series one at a time would cost a pass over the
  // growing sum for each, quadratic in a snapshot of many equal stacks.)
  struct Change {
    int64_t t_ms;
    __int128 bytes;
    __int128 allocs;
  };
  std::vector<Change> changes;
  for (const std::vector<LivePoint>* one : series) {
    __int128 bytes = 0, allocs = 0;
    for (const LivePoint& p : *one) {
      changes.push_back({p.t_ms, p.live_bytes - bytes, p.live_allocs - allocs});
      bytes = p.live_bytes;
      allocs = p.live_allocs;
    }
  }
  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& a, const Change& b) { return a.t_ms < b.t_ms; });
  const auto clamp = [](__int128 v) {
    return static_cast<int64_t>(std::clamp<__int128>(v, std::numeric_limits<int64_t>::min(),
                                                     std::numeric_limits<int64_t>::max()));
  };
  std::vector<LivePoint> out;
  __int128 bytes = 0, allocs = 0;
  for (size_t i = 0; i < changes.size(); ++i) {
    bytes += changes[i].bytes;
    allocs += changes[i].allocs;
    if (i + 1 == changes.size() || changes[i + 1].t_ms != changes[i].t_ms) {
      out.push_back({changes[i].t_ms, clamp(bytes), clamp(allocs)});
    }
  }
  return out;
}

std::vector<LivePoint> SumSeries(const std::vector<LivePoint>& a, const std::vector<LivePoint>& b) {
  return SumSeries(std::vector<const std::vector<LivePoint>*>{&a, &b});
}

std::vector<int64_t> CommonTimes(const std::vector<SnapshotStack>& stacks, size_t max_points) {
  // One sort of every time. (Sorting as times were added, to keep the union small, sorted
  // the whole union again for each stack once the times were mostly distinct: quadratic.)
  size_t points = 0;
  for (const SnapshotStack& s : stacks) points += s.series.size();
  std::vector<int64_t> times;
  times.reserve(points);
  for (const SnapshotStack& s : stacks) {
    for (const LivePoint& p : s.series) times.push_back(p.t_ms);
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
