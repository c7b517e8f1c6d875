#include "bench/baselines/mann_kendall_baseline.h"

#include <cmath>

#include "bench/baselines/duration_format.h"
#include "fmt/format.h"

namespace drip::bench {
namespace {

int Sign(uint64_t a, uint64_t b) { return a > b ? 1 : (a < b ? -1 : 0); }

// Mann-Kendall z of S over n points, continuity-corrected. Means of noisy byte counts
// almost never tie, so the variance's tie correction is left out.
double ZScore(int64_t s, int64_t n) {
  const double variance = static_cast<double>(n) * (n - 1) * (2 * n + 5) / 18.0;
  if (s == 0 || variance <= 0) return 0;
  return (static_cast<double>(s) - (s > 0 ? 1 : -1)) / std::sqrt(variance);
}

}  // namespace

void MannKendallBaseline::AddPoint(State& s, const DownsampledPoint& p) const {
  if (s.ring.empty()) s.ring.resize(params_.window_points);
  const int64_t window_s = params_.window_points * params_.step_s;
  auto pop_oldest = [&] {
    const uint64_t oldest = s.At(0).value;
    for (uint32_t i = 1; i < s.size; ++i) s.s -= Sign(s.At(i).value, oldest);
    s.head = (s.head + 1) % s.ring.size();
    --s.size;
  };
  while (s.size > 0 && s.At(0).t <= p.t - window_s) pop_oldest();
  if (s.size == s.ring.size()) pop_oldest();
  for (uint32_t i = 0; i < s.size; ++i) s.s += Sign(p.mean, s.At(i).value);
  s.ring[(s.head + s.size) % s.ring.size()] = {p.t, p.mean};
  ++s.size;
}

bool MannKendallBaseline::SenSlopeAbove(const State& s, double bytes_per_second) const {
  const uint64_t pairs = static_cast<uint64_t>(s.size) * (s.size - 1) / 2;
  uint64_t above = 0;
  for (uint32_t i = 0; i < s.size; ++i) {
    const Point& a = s.At(i);
    for (uint32_t j = i + 1; j < s.size; ++j) {
      const Point& b = s.At(j);
      const double rise = static_cast<double>(b.value) - static_cast<double>(a.value);
      if (rise > bytes_per_second * static_cast<double>(b.t - a.t)) ++above;
    }
  }
  return 2 * above > pairs;
}

void MannKendallBaseline::Observe(uint32_t series, int64_t t, uint64_t bytes) {
  if (series >= states_.size()) states_.resize(series + 1);
  State& s = states_[series];
  DownsampledPoint point{};
  if (!s.downsampler.Add(t, bytes, params_.step_s, &point)) return;
  AddPoint(s, point);
  if (s.alert.flagged() || s.size < static_cast<uint32_t>(params_.window_points * 5 / 6)) return;
  const double z = ZScore(s.s, s.size);
  bool flag = false;
  if (z > params_.min_z) {
    double sum = 0;
    for (uint32_t i = 0; i < s.size; ++i) sum += static_cast<double>(s.At(i).value);
    const double mean = sum / s.size;
    flag = SenSlopeAbove(s, params_.min_relative_slope_per_hour * mean / 3600.0);
  }
  s.alert.Evaluate(flag, point.t, t, 0);
}

std::vector<std::pair<uint32_t, int64_t>> MannKendallBaseline::Flags() const {
  std::vector<std::pair<uint32_t, int64_t>> flags;
  for (uint32_t i = 0; i < states_.size(); ++i) {
    if (states_[i].alert.flagged()) flags.emplace_back(i, states_[i].alert.first_flagged());
  }
  return flags;
}

std::string MannKendallBaseline::params() const {
  return fmt::format("{} × {} means, z > {:g}, Sen slope > {:g}%/h", params_.window_points,
                     FormatDuration(params_.step_s), params_.min_z,
                     params_.min_relative_slope_per_hour * 100);
}

size_t MannKendallBaseline::BytesPerSeries() const {
  return sizeof(State) + params_.window_points * sizeof(Point);
}

}  // namespace drip::bench
