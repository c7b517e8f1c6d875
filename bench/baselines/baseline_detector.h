// BaselineDetector: the interface shared by the leak detectors an operator would use
// instead of Drip (thresholds, Prometheus predict_linear, per-series trend tests), so
// that bench/detector_bench.cc can feed them the same stream and score them the same way.
//
// Every baseline is streaming: it is fed each sample once, in time order, and keeps a
// bounded state per series (a downsampled window, never the whole history). Once a
// series is flagged it stays flagged, like a suspect of the bucketed detector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace drip::bench {

class BaselineDetector {
 public:
  virtual ~BaselineDetector() = default;

  // One sample of series `series` (dense ids from 0) at `t` (Unix seconds).
  virtual void Observe(uint32_t series, int64_t t, uint64_t bytes) = 0;

  // (series, time of the sample at which it was first flagged) of every flagged series.
  virtual std::vector<std::pair<uint32_t, int64_t>> Flags() const = 0;

  // Short name of the method ("predict_linear") and its parameters ("f=0.2 for=1h").
  virtual std::string name() const = 0;
  virtual std::string params() const = 0;

  // Bytes of state per series at steady state, to compare with Drip's.
  virtual size_t BytesPerSeries() const = 0;
};

}  // namespace drip::bench
