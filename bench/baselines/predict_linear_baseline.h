// PredictLinearBaseline: the alert people write in Prometheus for a leak —
//
//   predict_linear(mem[6h], 24 * 3600) > (1 + f) * mem   for: D
//
// a least-squares line over the last 6 h of (1-minute) points, extrapolated a day ahead
// and compared with the current value. Evaluated at every point, as a rule is at every
// evaluation interval; not evaluated before the window is 5/6 full, which is kinder to
// it than Prometheus (which extrapolates from any two points).
#pragma once

#include <cstdint>
#include <vector>

#include "bench/baselines/alert_state.h"
#include "bench/baselines/baseline_detector.h"
#include "bench/baselines/downsampler.h"
#include "bench/baselines/sliding_least_squares.h"

namespace drip::bench {

struct PredictLinearParams {
  double fraction = 0.2;          // flag when the prediction exceeds (1 + f) × current
  int64_t for_s = 0;              // the rule must hold this long
  int64_t window_s = 6 * 3600;    // the range vector: mem[6h]
  int64_t horizon_s = 24 * 3600;  // how far ahead it predicts
  int64_t step_s = 60;            // the scrape interval the points are taken at

  bool operator==(const PredictLinearParams&) const = default;
};

class PredictLinearBaseline : public BaselineDetector {
 public:
  explicit PredictLinearBaseline(PredictLinearParams params) : params_(params) {}

  void Observe(uint32_t series, int64_t t, uint64_t bytes) override;
  std::vector<std::pair<uint32_t, int64_t>> Flags() const override;
  std::string name() const override { return "predict_linear"; }
  std::string params() const override;
  size_t BytesPerSeries() const override;

 private:
  struct State {
    explicit State(const PredictLinearParams& p) : fit(p.window_s, p.step_s) {}
    Downsampler downsampler;
    SlidingLeastSquares fit;
    AlertState alert;
  };
  PredictLinearParams params_;
  std::vector<State> states_;
};

}  // namespace drip::bench
