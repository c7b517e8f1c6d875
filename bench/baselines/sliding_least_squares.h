// SlidingLeastSquares: an ordinary least-squares line over the points of a sliding time
// window, updated in O(1) per point — the regression behind Prometheus' predict_linear()
// and the per-series linear-regression baseline.
//
// The sums are kept exactly in 128-bit integers (points are integer seconds and KiB),
// so adding and evicting millions of points never drifts, which running floating-point
// sums over large timestamps would. A point is 8 bytes (seconds since the first point,
// KiB — far finer than any series' noise), half the window's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace drip::bench {

class SlidingLeastSquares {
 public:
  struct Fit {
    double slope = 0;        // bytes per second
    double fitted_last = 0;  // the line's value at the newest point's time
    double mean = 0;         // mean of the window's values
    double r2 = 0;           // coefficient of determination; 0 when values are flat
  };

  // Keeps points newer than `window_s` before the newest one; at most
  // window_s / step_s + 1 of them when points come one per step.
  SlidingLeastSquares(int64_t window_s, int64_t step_s);

  void Add(int64_t t, uint64_t value);

  size_t size() const { return size_; }
  // Time from the oldest to the newest point in the window.
  int64_t span() const;
  uint64_t last_value() const;
  Fit Compute() const;

  size_t capacity_bytes() const { return ring_.capacity() * sizeof(Point) + sizeof(*this); }

 private:
  struct Point {
    int32_t t;       // seconds since origin_
    uint32_t value;  // KiB
  };
  void Push(const Point& p);
  void PopOldest();
  const Point& At(size_t i) const { return ring_[(head_ + i) % ring_.size()]; }

  int64_t window_s_;
  int64_t origin_ = 0;       // time of the first point ever added
  std::vector<Point> ring_;  // allocated on the first point
  size_t capacity_;
  size_t head_ = 0;
  size_t size_ = 0;
  __int128 sx_ = 0, sy_ = 0, sxx_ = 0, sxy_ = 0, syy_ = 0;
};

}  // namespace drip::bench
