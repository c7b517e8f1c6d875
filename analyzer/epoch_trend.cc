#include "analyzer/epoch_trend.h"

#include <algorithm>
#include <climits>

namespace drip::analyzer {
namespace {

// Least-squares slope of y over evenly spaced x = 0, 1, ..., n - 1.
struct Sums {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
  void Add(double x, double y) {
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    syy += y * y;
  }
  double Slope() const {
    const double d = n * sxx - sx * sx;
    return d > 0 ? (n * sxy - sx * sy) / d : 0;
  }
};

}  // namespace

void EpochTrend::Add(int64_t t, int32_t bucket, int64_t epoch_seconds, bool partial) {
  if (run_ > 0 && t - newest_t_ > epoch_seconds + epoch_seconds / 2) run_ = 0;
  buckets_[pos_] = static_cast<int16_t>(std::clamp<int32_t>(bucket, INT16_MIN, INT16_MAX));
  pos_ = static_cast<uint8_t>((pos_ + 1) % kEpochs);
  count_ = static_cast<uint8_t>(std::min(count_ + 1, kEpochs));
  run_ = partial ? 0 : static_cast<uint8_t>(std::min(run_ + 1, kEpochs));
  newest_t_ = t;
}

int32_t EpochTrend::LowestOf(int n) const {
  int32_t low = Newest(0);
  for (int i = 1; i < std::min<int>(n, count_); ++i) low = std::min(low, Newest(i));
  return low;
}

std::optional<EpochTrend::Line> EpochTrend::Fit(int n, const BucketScale& scale,
                                                int64_t epoch_seconds) const {
  n = std::min<int>(n, run_);
  if (n < 2) return std::nullopt;
  const double hours_per_epoch = static_cast<double>(epoch_seconds) / 3600.0;
  std::array<double, kEpochs> bytes{};
  Sums all;
  Sums older;
  Sums newer;
  const int half = (n + 1) / 2;  // the halves share the middle point when n is odd
  for (int i = 0; i < n; ++i) {
    bytes[i] = scale.BytesAt(Newest(n - 1 - i));  // oldest first
    all.Add(i, bytes[i]);
    if (i < half) older.Add(i, bytes[i]);
    if (i >= n - half) newer.Add(i, bytes[i]);
  }
  Line line;
  const double slope = all.Slope();
  const double mean_y = all.sy / all.n;
  const double intercept = mean_y - slope * all.sx / all.n;
  double residual = 0;
  double total = 0;
  for (int i = 0; i < n; ++i) {
    const double fitted = intercept + slope * i;
    residual += (bytes[i] - fitted) * (bytes[i] - fitted);
    total += (bytes[i] - mean_y) * (bytes[i] - mean_y);
  }
  line.r2 = total > 0 ? 1 - residual / total : 0;
  line.bytes_per_hour = slope / hours_per_epoch;
  line.older_bytes_per_hour = older.Slope() / hours_per_epoch;
  line.newer_bytes_per_hour = newer.Slope() / hours_per_epoch;
  line.start_bytes = intercept;
  line.end_bytes = intercept + slope * (n - 1);
  line.hours = (n - 1) * hours_per_epoch;
  return line;
}

}  // namespace drip::analyzer
