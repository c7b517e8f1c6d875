// LinearRegressionBaseline: the per-series trend test a data scientist writes first — a
// least-squares line over a sliding window of 5-minute means, flagged when the line
// explains the data well (R² above a gate) and rises faster than a minimum relative
// slope (a fraction of the series' own level per hour, so 5 MB and 5 GB series alike).
#pragma once

#include <cstdint>
#include <vector>

#include "bench/baselines/alert_state.h"
#include "bench/baselines/baseline_detector.h"
#include "bench/baselines/downsampler.h"
#include "bench/baselines/sliding_least_squares.h"

namespace drip::bench {

struct LinearRegressionParams {
  double min_r2 = 0.8;
  double min_relative_slope_per_hour = 0.002;  // 0.2 % of the window's mean per hour
  int64_t window_s = 12 * 3600;
  int64_t step_s = 300;

  bool operator==(const LinearRegressionParams&) const = default;
};

class LinearRegressionBaseline : public BaselineDetector {
 public:
  explicit LinearRegressionBaseline(LinearRegressionParams params) : params_(params) {}

  void Observe(uint32_t series, int64_t t, uint64_t bytes) override;
  std::vector<std::pair<uint32_t, int64_t>> Flags() const override;
  std::string name() const override { return "linear_regression"; }
  std::string params() const override;
  size_t BytesPerSeries() const override;

 private:
  struct State {
    explicit State(const LinearRegressionParams& p) : fit(p.window_s, p.step_s) {}
    Downsampler downsampler;
    SlidingLeastSquares fit;
    AlertState alert;
  };
  LinearRegressionParams params_;
  std::vector<State> states_;
};

}  // namespace drip::bench
