#include "bench/baselines/linear_regression_baseline.h"

#include "bench/baselines/duration_format.h"
#include "fmt/format.h"

namespace drip::bench {

void LinearRegressionBaseline::Observe(uint32_t series, int64_t t, uint64_t bytes) {
  while (series >= states_.size()) states_.emplace_back(params_);
  State& s = states_[series];
  DownsampledPoint point{};
  if (!s.downsampler.Add(t, bytes, params_.step_s, &point)) return;
  s.fit.Add(point.t, point.mean);
  // A partial window's line is too easily steep: judge only (nearly) full windows.
  if (s.fit.span() < params_.window_s * 5 / 6) return;
  const SlidingLeastSquares::Fit fit = s.fit.Compute();
  const bool rising =
      fit.mean > 0 && fit.slope * 3600 > params_.min_relative_slope_per_hour * fit.mean;
  s.alert.Evaluate(rising && fit.r2 > params_.min_r2, point.t, t, 0);
}

std::vector<std::pair<uint32_t, int64_t>> LinearRegressionBaseline::Flags() const {
  std::vector<std::pair<uint32_t, int64_t>> flags;
  for (uint32_t i = 0; i < states_.size(); ++i) {
    if (states_[i].alert.flagged()) flags.emplace_back(i, states_[i].alert.first_flagged());
  }
  return flags;
}

std::string LinearRegressionBaseline::params() const {
  return fmt::format("{} window of {} means, R² > {:g}, slope > {:g}%/h",
                     FormatDuration(params_.window_s), FormatDuration(params_.step_s),
                     params_.min_r2, params_.min_relative_slope_per_hour * 100);
}

size_t LinearRegressionBaseline::BytesPerSeries() const {
  return states_.empty()
             ? sizeof(State)
             : sizeof(State) - sizeof(SlidingLeastSquares) + states_.front().fit.capacity_bytes();
}

}  // namespace drip::bench
