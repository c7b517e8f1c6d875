// Downsampler: folds one series' raw samples into fixed steps (e.g. 5-minute means), the
// resolution at which the baselines evaluate — what `avg_over_time(x[5m])` gives an
// alert rule, and what keeps a baseline's window small.
#pragma once

#include <cstdint>
#include <limits>

namespace drip::bench {

// One closed step: its start time and the mean of its samples.
struct DownsampledPoint {
  int64_t t;
  uint64_t mean;
};

class Downsampler {
 public:
  // Adds a sample; returns true and sets *closed when `t` opened a new step, closing the
  // previous one. A sample older than the open step is folded into it: the baselines
  // are fed in time order, and an out-of-order sample should not reopen a closed step.
  bool Add(int64_t t, uint64_t bytes, int64_t step_s, DownsampledPoint* closed) {
    const int64_t step = FloorDiv(t, step_s);
    bool did_close = false;
    if (count_ > 0 && step > step_) {
      closed->t = step_ * step_s;
      closed->mean = static_cast<uint64_t>(sum_ / count_);
      did_close = true;
      sum_ = 0;
      count_ = 0;
    }
    if (count_ == 0) step_ = step;
    sum_ += static_cast<double>(bytes);
    ++count_;
    return did_close;
  }

 private:
  static int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b < 0 ? 1 : 0); }

  int64_t step_ = std::numeric_limits<int64_t>::min();
  double sum_ = 0;
  uint32_t count_ = 0;
};

}  // namespace drip::bench
