#include "bench/baselines/predict_linear_baseline.h"

#include "bench/baselines/duration_format.h"
#include "fmt/format.h"

namespace drip::bench {

void PredictLinearBaseline::Observe(uint32_t series, int64_t t, uint64_t bytes) {
  while (series >= states_.size()) states_.emplace_back(params_);
  State& s = states_[series];
  DownsampledPoint point{};
  if (!s.downsampler.Add(t, bytes, params_.step_s, &point)) return;
  s.fit.Add(point.t, point.mean);
  if (s.fit.span() < params_.window_s * 5 / 6) return;
  const SlidingLeastSquares::Fit fit = s.fit.Compute();
  // predict_linear() extrapolates from the line's value at the evaluation time.
  const double predicted = fit.fitted_last + fit.slope * static_cast<double>(params_.horizon_s);
  const double current = static_cast<double>(s.fit.last_value());
  s.alert.Evaluate(predicted > (1 + params_.fraction) * current, point.t, t, params_.for_s);
}

std::vector<std::pair<uint32_t, int64_t>> PredictLinearBaseline::Flags() const {
  std::vector<std::pair<uint32_t, int64_t>> flags;
  for (uint32_t i = 0; i < states_.size(); ++i) {
    if (states_[i].alert.flagged()) flags.emplace_back(i, states_[i].alert.first_flagged());
  }
  return flags;
}

std::string PredictLinearBaseline::params() const {
  return fmt::format("predict_linear(x[{}], {}) > {:g} × x, {} points, for {}",
                     FormatDuration(params_.window_s), FormatDuration(params_.horizon_s),
                     1 + params_.fraction, FormatDuration(params_.step_s),
                     FormatDuration(params_.for_s));
}

size_t PredictLinearBaseline::BytesPerSeries() const {
  return states_.empty()
             ? sizeof(State)
             : sizeof(State) - sizeof(SlidingLeastSquares) + states_.front().fit.capacity_bytes();
}

}  // namespace drip::bench
