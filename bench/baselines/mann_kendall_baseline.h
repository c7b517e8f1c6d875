// MannKendallBaseline: the textbook non-parametric trend test over a sliding window of
// downsampled points (48 × 15-minute means = 12 h): flag when the Mann-Kendall z for an
// upward trend exceeds a critical value and Sen's slope (the median of pairwise slopes)
// exceeds a minimum relative slope. Robust to outliers and to non-linear monotonic
// growth, which least squares is not.
//
// S is updated in O(n) per point (the pairs of the point that leaves and the point that
// arrives); Sen's slope costs O(n²) and is only computed when z already passed.
#pragma once

#include <cstdint>
#include <vector>

#include "bench/baselines/alert_state.h"
#include "bench/baselines/baseline_detector.h"
#include "bench/baselines/downsampler.h"

namespace drip::bench {

struct MannKendallParams {
  double min_z = 2.33;                         // one-sided, p < 0.01
  double min_relative_slope_per_hour = 0.002;  // Sen's slope over the window's mean
  int window_points = 48;
  int64_t step_s = 900;

  bool operator==(const MannKendallParams&) const = default;
};

class MannKendallBaseline : public BaselineDetector {
 public:
  explicit MannKendallBaseline(MannKendallParams params) : params_(params) {}

  void Observe(uint32_t series, int64_t t, uint64_t bytes) override;
  std::vector<std::pair<uint32_t, int64_t>> Flags() const override;
  std::string name() const override { return "mann_kendall"; }
  std::string params() const override;
  size_t BytesPerSeries() const override;

 private:
  struct Point {
    int64_t t;
    uint64_t value;
  };
  struct State {
    Downsampler downsampler;
    std::vector<Point> ring;  // allocated on the first point
    uint32_t head = 0;
    uint32_t size = 0;
    int64_t s = 0;  // Mann-Kendall S of the points in the ring
    AlertState alert;
    const Point& At(uint32_t i) const { return ring[(head + i) % ring.size()]; }
  };
  void AddPoint(State& s, const DownsampledPoint& p) const;
  // True when more than half the pairwise slopes exceed min slope: Sen's slope (their
  // median) exceeds it, without sorting.
  bool SenSlopeAbove(const State& s, double bytes_per_second) const;

  MannKendallParams params_;
  std::vector<State> states_;
};

}  // namespace drip::bench
