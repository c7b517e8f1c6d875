#include "bench/baselines/static_threshold_baseline.h"

#include "bench/baselines/duration_format.h"
#include "fmt/format.h"

namespace drip::bench {

void StaticThresholdBaseline::Observe(uint32_t series, int64_t t, uint64_t bytes) {
  if (series >= states_.size()) states_.resize(series + 1);
  State& s = states_[series];
  if (s.first_t == INT64_MIN) s.first_t = t;
  const int64_t reference_end = s.first_t + params_.reference_s;
  if (t < reference_end) {
    s.reference_sum += static_cast<double>(bytes);
    ++s.reference_count;
  }
  DownsampledPoint point{};
  if (!s.downsampler.Add(t, bytes, params_.step_s, &point)) return;
  // Only steps wholly after the reference hour are judged against it.
  if (point.t < reference_end || s.reference_count == 0) return;
  const double reference = s.reference_sum / s.reference_count;
  s.alert.Evaluate(static_cast<double>(point.mean) > (1 + params_.fraction) * reference, point.t, t,
                   params_.for_s);
}

std::vector<std::pair<uint32_t, int64_t>> StaticThresholdBaseline::Flags() const {
  std::vector<std::pair<uint32_t, int64_t>> flags;
  for (uint32_t i = 0; i < states_.size(); ++i) {
    if (states_[i].alert.flagged()) flags.emplace_back(i, states_[i].alert.first_flagged());
  }
  return flags;
}

std::string StaticThresholdBaseline::params() const {
  return fmt::format("+{:g}% over first {}, {} means, for {}", params_.fraction * 100,
                     FormatDuration(params_.reference_s), FormatDuration(params_.step_s),
                     FormatDuration(params_.for_s));
}

}  // namespace drip::bench
