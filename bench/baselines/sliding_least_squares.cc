#include "bench/baselines/sliding_least_squares.h"

#include <algorithm>

namespace drip::bench {

SlidingLeastSquares::SlidingLeastSquares(int64_t window_s, int64_t step_s)
    : window_s_(window_s),
      capacity_(static_cast<size_t>(window_s / std::max<int64_t>(step_s, 1)) + 1) {}

void SlidingLeastSquares::Add(int64_t t, uint64_t value) {
  if (ring_.empty()) {
    ring_.resize(capacity_);
    origin_ = t;
  }
  const int64_t rel = t - origin_;
  while (size_ > 0 && At(0).t <= rel - window_s_) PopOldest();
  // More points than expected per window (a step shorter than promised): the oldest go,
  // so the state stays bounded.
  if (size_ == ring_.size()) PopOldest();
  Push({static_cast<int32_t>(rel),
        static_cast<uint32_t>(std::min<uint64_t>((value + 512) >> 10, UINT32_MAX))});
}

void SlidingLeastSquares::Push(const Point& p) {
  ring_[(head_ + size_) % ring_.size()] = p;
  ++size_;
  const __int128 x = p.t, y = p.value;
  sx_ += x;
  sy_ += y;
  sxx_ += x * x;
  sxy_ += x * y;
  syy_ += y * y;
}

void SlidingLeastSquares::PopOldest() {
  const Point& p = At(0);
  const __int128 x = p.t, y = p.value;
  sx_ -= x;
  sy_ -= y;
  sxx_ -= x * x;
  sxy_ -= x * y;
  syy_ -= y * y;
  head_ = (head_ + 1) % ring_.size();
  --size_;
}

int64_t SlidingLeastSquares::span() const { return size_ < 2 ? 0 : At(size_ - 1).t - At(0).t; }

uint64_t SlidingLeastSquares::last_value() const {
  return size_ == 0 ? 0 : static_cast<uint64_t>(At(size_ - 1).value) << 10;
}

SlidingLeastSquares::Fit SlidingLeastSquares::Compute() const {
  Fit fit;
  if (size_ == 0) return fit;
  constexpr double kKiB = 1024;
  const __int128 n = static_cast<__int128>(size_);
  fit.mean = static_cast<double>(sy_) / static_cast<double>(size_) * kKiB;
  // n² × (co)variances, exact: the only rounding is the final division.
  const __int128 dxx = n * sxx_ - sx_ * sx_;
  const __int128 dxy = n * sxy_ - sx_ * sy_;
  const __int128 dyy = n * syy_ - sy_ * sy_;
  if (dxx <= 0) {
    fit.fitted_last = fit.mean;
    return fit;
  }
  fit.slope = static_cast<double>(dxy) / static_cast<double>(dxx) * kKiB;
  const double mean_t = static_cast<double>(sx_) / static_cast<double>(size_);
  fit.fitted_last = fit.mean + fit.slope * (static_cast<double>(At(size_ - 1).t) - mean_t);
  if (dyy > 0) {
    const double c = static_cast<double>(dxy);
    fit.r2 = c * c / (static_cast<double>(dxx) * static_cast<double>(dyy));
  }
  return fit;
}

}  // namespace drip::bench
