// EpochTrend: the current instance's last few hours, one point per epoch (its minimum).
// The newest few make the series' floor (the minimum over floor_epochs, under a garbage
// collector's sawtooth); all of them, when evenly spaced, make the straight line the
// limit and OOM-kill rules read (docs/detector.md): how fast the series grows right now,
// how steadily, and so how soon it reaches its memory limit. Unlike a climb it starts
// with the instance, start-up included: a fast leak can eat most of its headroom before
// a start-up grace is over.
//
// Fixed size (48 bytes): kEpochs bucketed minima.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "analyzer/bucket_scale.h"

namespace drip::analyzer {

class EpochTrend {
 public:
  static constexpr int kEpochs = 16;

  void Reset() { count_ = run_ = 0; }
  // The minimum (in buckets) of the epoch that ended at `t`. A skipped epoch (a silence
  // longer than one) starts the line over: the fit takes its points as evenly spaced.
  // So does a `partial` epoch (an instance's first, begun mid-epoch), which counts for
  // the floor but would put a point at the wrong time.
  void Add(int64_t t, int32_t bucket, int64_t epoch_seconds, bool partial = false);

  // Points kept, and how many of the newest are evenly spaced (what Fit may use).
  int count() const { return count_; }
  int run() const { return run_; }
  // The n-th newest point (0: the newest); n < count().
  int32_t Newest(int n = 0) const { return buckets_[(pos_ + kEpochs - 1 - n) % kEpochs]; }
  // The lowest of the newest n points.
  int32_t LowestOf(int n) const;

  // The least-squares line through the newest `n` points (2 ≤ n ≤ run()), in bytes.
  struct Line {
    double bytes_per_hour = 0;
    double r2 = 0;  // share of the points' variance the line explains (1: a straight rise)
    // The slope over the older and the newer half: a warm-up's decays, a leak's does not.
    double older_bytes_per_hour = 0;
    double newer_bytes_per_hour = 0;
    double start_bytes = 0;  // the line at the oldest point
    double end_bytes = 0;    // ... and at the newest
    double hours = 0;        // from the oldest point to the newest
  };
  std::optional<Line> Fit(int n, const BucketScale& scale, int64_t epoch_seconds) const;

 private:
  std::array<int16_t, kEpochs> buckets_{};
  int64_t newest_t_ = 0;
  uint8_t count_ = 0;
  uint8_t run_ = 0;
  uint8_t pos_ = 0;
};

}  // namespace drip::analyzer
