// BaselineGrid: the small parameter grid each baseline is tuned over, and the values
// chosen when no tuning run is wanted. detector_bench tunes every family on a fleet of
// a different seed than the one it scores (best per-series F1 wins), so that the
// baselines get the same chance as Drip's defaults and none is tuned on its test data.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/baselines/baseline_detector.h"

namespace drip::bench {

struct BaselineFamily {
  std::string name;
  // One factory per grid point; each makes a fresh detector with that point's parameters.
  std::vector<std::function<std::unique_ptr<BaselineDetector>()>> grid;
  // The grid point used without a tuning run: the best on tuning seed 7 when last
  // measured (docs/benchmarks.md).
  size_t untuned = 0;
};

class BaselineGrid {
 public:
  static std::vector<BaselineFamily> Families();
};

}  // namespace drip::bench
