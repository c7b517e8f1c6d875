// DetectorConfig: every threshold of the bucketed leak detector, with defaults that work
// on a fleet sampled every 10–60 s. docs/detector.md explains each one; the collector
// reads them under `detector:` in collector.yaml and `dripctl analyze --config` from a
// detector.yaml with the same keys at the top level.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/base/config_reader.h"

namespace drip::analyzer {

struct DetectorConfig {
  // Samples are folded into epochs of this length; an epoch keeps only its minimum, the
  // memory the series could not give back, so spikes and GC peaks inside it vanish.
  int64_t epoch_seconds = 900;
  // The level the detector follows is the minimum over this many closed epochs (at most
  // 16): the floor under a garbage collector's sawtooth of up to that period.
  int floor_epochs = 4;
  // Relative width of one fine bucket (levels are log-bucketed, so 500 MB and 5 MB
  // series are treated alike).
  double bucket_width = 0.0025;
  // A fall of more than this many buckets below the climb's running maximum ends a climb.
  int climb_tolerance_buckets = 2;
  // A climb must rise at least this many buckets and set this many new highs…
  int min_rise_buckets = 3;
  int min_records = 4;
  // …over at least this long.
  int64_t min_climb_seconds = 4 * 3600;
  // …and end above the series' normal high (top of where it spends its time) by this many.
  int normal_high_margin_buckets = 4;
  // An out-of-range level that holds flat (within the tolerance) this long becomes the
  // new normal: a step on reload, a bigger dataset.
  int64_t relearn_seconds = 6 * 3600;
  // Occupancy below this fraction of a series' history does not count as "normal".
  double normal_occupancy_fraction = 0.02;
  // A series with less history than this has no trusted normal range, and has not been
  // seen through a day: it is flagged only by a climb of young_min_climb_seconds. With
  // young_fast_rise_fraction above 0, also by one rising that fraction over
  // young_fast_min_climb_seconds — off by default: in a series' first day a daily swing,
  // a batch ramp and a cache filling up climb that fast too.
  int64_t established_seconds = 24 * 3600;
  int64_t young_min_climb_seconds = 24 * 3600;
  double young_fast_rise_fraction = 0;
  int64_t young_fast_min_climb_seconds = 6 * 3600;
  // Not levelling off: the rise over each third of a climb must be at least this
  // fraction of a third of the whole rise, the slope of its second half this fraction of
  // the first half's (a warm-up's rate decays, a leak's does not), and a new high must
  // have been set within max(level_off_seconds, 3 × the mean time between highs).
  double min_recent_slope_ratio = 0.7;
  int64_t level_off_seconds = 3 * 3600;
  // A new instance (restart) starts with this long in which growth is not judged:
  // startup buffers and cache warm-up.
  int64_t startup_grace_seconds = 2 * 3600;
  // Leaks hidden by restarts: this many consecutive instances that each climbed for at
  // least restart_min_climb_seconds and died still climbing.
  int restart_leak_instances = 2;
  int64_t restart_min_climb_seconds = 2 * 3600;
  double restart_min_recent_slope_ratio = 0.7;
  // Fleet drift: when at least fleet_min_hosts hosts, and fleet_min_fraction of the
  // component's hosts, climb above their normal range together, a host of that component
  // is flagged after fleet_min_climb_seconds instead of min_climb_seconds.
  int fleet_min_hosts = 3;
  double fleet_min_fraction = 0.2;
  int64_t fleet_min_climb_seconds = 2 * 3600;
  // Samples older than the series' open epoch by more than this are dropped (counted).
  int64_t max_lateness_seconds = 900;
  // A gap longer than this is reported in the reason of a suspect that spans it.
  int64_t max_gap_seconds = 2 * 3600;
  // Used for the ETA to OOM of hosts whose memory size is not known; 0 means unknown.
  uint64_t default_host_memory_bytes = 0;
};

// Reads the keys under `prefix` ("" or "detector."), leaving absent ones at their
// defaults, and checks them against each other. Errors name the source, line and key.
absl::Status ReadDetectorConfig(ConfigReader& reader, const std::string& prefix,
                                DetectorConfig* config);

// Cross-field checks (also run by ReadDetectorConfig).
absl::Status ValidateDetectorConfig(const DetectorConfig& config);

}  // namespace drip::analyzer
