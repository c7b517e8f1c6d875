#include "bench/baselines/baseline_grid.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "bench/baselines/linear_regression_baseline.h"
#include "bench/baselines/mann_kendall_baseline.h"
#include "bench/baselines/predict_linear_baseline.h"
#include "bench/baselines/static_threshold_baseline.h"

namespace drip::bench {
namespace {

// A family from its grid of parameters; `untuned` must be one of them.
template <typename Detector, typename Params>
BaselineFamily Family(std::string name, const std::vector<Params>& grid, const Params& untuned) {
  BaselineFamily family;
  family.name = std::move(name);
  for (const Params& p : grid) {
    family.grid.push_back(
        [p]() -> std::unique_ptr<BaselineDetector> { return std::make_unique<Detector>(p); });
  }
  family.untuned = static_cast<size_t>(std::find(grid.begin(), grid.end(), untuned) - grid.begin());
  if (family.untuned == grid.size()) {
    std::fprintf(stderr, "baseline_grid: the untuned %s parameters are not in its grid\n",
                 family.name.c_str());
    std::abort();
  }
  return family;
}

BaselineFamily StaticThreshold() {
  std::vector<StaticThresholdParams> grid;
  for (double fraction : {0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0}) {
    for (int64_t for_s : {0, 1800, 2 * 3600, 6 * 3600}) {
      StaticThresholdParams p;
      p.fraction = fraction;
      p.for_s = for_s;
      grid.push_back(p);
    }
  }
  StaticThresholdParams untuned;
  untuned.fraction = 0.3;
  untuned.for_s = 1800;
  return Family<StaticThresholdBaseline>("static_threshold", grid, untuned);
}

BaselineFamily PredictLinear() {
  std::vector<PredictLinearParams> grid;
  for (double fraction : {0.01, 0.02, 0.05, 0.1, 0.2, 0.5}) {
    for (int64_t for_s : {0, 3600, 3 * 3600, 6 * 3600}) {
      PredictLinearParams p;
      p.fraction = fraction;
      p.for_s = for_s;
      grid.push_back(p);
    }
  }
  PredictLinearParams untuned;
  untuned.fraction = 0.02;
  untuned.for_s = 6 * 3600;
  return Family<PredictLinearBaseline>("predict_linear", grid, untuned);
}

BaselineFamily LinearRegression() {
  std::vector<LinearRegressionParams> grid;
  for (int64_t window_s : {12 * 3600, 24 * 3600}) {
    for (double r2 : {0.5, 0.65, 0.8, 0.9}) {
      for (double slope : {0.0001, 0.0002, 0.0005, 0.001, 0.002}) {
        LinearRegressionParams p;
        p.window_s = window_s;
        p.min_r2 = r2;
        p.min_relative_slope_per_hour = slope;
        grid.push_back(p);
      }
    }
  }
  LinearRegressionParams untuned;
  untuned.window_s = 24 * 3600;
  untuned.min_r2 = 0.8;
  untuned.min_relative_slope_per_hour = 0.0001;
  return Family<LinearRegressionBaseline>("linear_regression", grid, untuned);
}

BaselineFamily MannKendall() {
  std::vector<MannKendallParams> grid;
  for (int points : {48, 96}) {
    for (double z : {1.645, 2.33, 3.09}) {
      for (double slope : {0.0005, 0.001, 0.002, 0.005}) {
        MannKendallParams p;
        p.window_points = points;
        p.min_z = z;
        p.min_relative_slope_per_hour = slope;
        grid.push_back(p);
      }
    }
  }
  MannKendallParams untuned;
  untuned.window_points = 96;
  untuned.min_z = 2.33;
  untuned.min_relative_slope_per_hour = 0.001;
  return Family<MannKendallBaseline>("mann_kendall", grid, untuned);
}

}  // namespace

std::vector<BaselineFamily> BaselineGrid::Families() {
  return {StaticThreshold(), PredictLinear(), LinearRegression(), MannKendall()};
}

}  // namespace drip::bench
