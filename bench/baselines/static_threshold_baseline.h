// StaticThresholdBaseline: the alert most fleets start with — memory above a fixed
// fraction over the series' own level in its first hour of life (`avg_over_time(x[5m]) >
// (1 + f) × first-hour level`, with an optional `for:`). A per-series relative threshold
// rather than an absolute one, because an absolute one cannot fit 5 MB and 5 GB
// processes at once and would be the weaker straw man.
#pragma once

#include <cstdint>
#include <vector>

#include "bench/baselines/alert_state.h"
#include "bench/baselines/baseline_detector.h"
#include "bench/baselines/downsampler.h"

namespace drip::bench {

struct StaticThresholdParams {
  double fraction = 0.2;       // flag above (1 + fraction) × the first hour's mean
  int64_t for_s = 0;           // the rule must hold this long
  int64_t reference_s = 3600;  // how long the reference level is measured
  int64_t step_s = 300;        // evaluated on means over this step

  bool operator==(const StaticThresholdParams&) const = default;
};

class StaticThresholdBaseline : public BaselineDetector {
 public:
  explicit StaticThresholdBaseline(StaticThresholdParams params) : params_(params) {}

  void Observe(uint32_t series, int64_t t, uint64_t bytes) override;
  std::vector<std::pair<uint32_t, int64_t>> Flags() const override;
  std::string name() const override { return "static_threshold"; }
  std::string params() const override;
  size_t BytesPerSeries() const override { return sizeof(State); }

 private:
  struct State {
    int64_t first_t = INT64_MIN;
    double reference_sum = 0;
    uint32_t reference_count = 0;
    Downsampler downsampler;
    AlertState alert;
  };
  StaticThresholdParams params_;
  std::vector<State> states_;
};

}  // namespace drip::bench
