#include "agent/heap/sampling_rate_planner.h"

#include <algorithm>
#include <bit>

namespace drip::agent {
namespace {

// The allocation rate is measured over at least min_measure_seconds of open windows, or
// over this many sampling periods' worth of bytes.
constexpr uint64_t kMeasureSamplePeriods = 64;

}  // namespace

SamplingRatePlanner::SamplingRatePlanner(const Config& config)
    : config_(config),
      mean_bytes_(std::clamp(config.initial_mean_bytes, config.min_mean_bytes,
                             std::max(config.min_mean_bytes, config.max_mean_bytes))) {}

std::optional<uint64_t> SamplingRatePlanner::Update(double window_seconds, uint64_t window_bytes,
                                                    double on_fraction) {
  const double seconds = window_seconds - last_seconds_;
  if (window_bytes < last_bytes_ || seconds <= 0) return std::nullopt;
  // Short windows of a busy target measure its rate as well in bytes as a long one does.
  if (seconds < config_.min_measure_seconds &&
      window_bytes - last_bytes_ < kMeasureSamplePeriods * mean_bytes_) {
    return std::nullopt;
  }
  const double rate = static_cast<double>(window_bytes - last_bytes_) / seconds;
  last_seconds_ = window_seconds;
  last_bytes_ = window_bytes;
  const double per_window_second =
      std::min(config_.target_samples_per_second / std::clamp(on_fraction, 1e-3, 1.0),
               std::max(config_.target_samples_per_second, config_.max_samples_per_second));
  double wanted = rate / std::max(per_window_second, 1e-3);
  // The densest T the cost limit allows: sizing for a known growth stops there.
  const double cheapest = rate / std::max(config_.max_samples_per_second, 1e-3);
  // Windows open a share f of the time see f of the growth.
  const double for_growth = config_.expected_growth_bytes_per_second * config_.window_seconds *
                            std::clamp(on_fraction, 1e-3, 1.0) /
                            std::max(config_.growth_samples, 1.0);
  if (for_growth > 0) {
    const double sparsest = rate / std::max(config_.min_samples_per_second, 1e-3);
    wanted = std::max(std::min(for_growth, sparsest), cheapest);
  }
  const uint64_t hi = std::max(config_.min_mean_bytes, config_.max_mean_bytes);
  const uint64_t clamped = static_cast<uint64_t>(
      std::clamp(wanted, static_cast<double>(config_.min_mean_bytes), static_cast<double>(hi)));
  // Hysteresis on the wanted T itself, so that a rate near a power of two does not flap.
  if (clamped < 2 * mean_bytes_ && 2 * clamped > mean_bytes_) return std::nullopt;
  // The power of two nearest below, within the bounds; nearest above when below would
  // cost more than the limit allows.
  uint64_t next = std::bit_floor(std::max<uint64_t>(clamped, 1));
  if (static_cast<double>(next) < cheapest && next < hi) next *= 2;
  next = std::clamp<uint64_t>(next, config_.min_mean_bytes, hi);
  if (next == mean_bytes_) return std::nullopt;
  mean_bytes_ = next;
  return next;
}

}  // namespace drip::agent
