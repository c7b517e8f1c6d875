// DiagnoserConfig: every threshold HeapDiagnoser uses to tell a leak from a cache, a
// startup buffer and transient churn, with defaults for snapshots of minutes to hours
// sampled every few seconds. docs/snapshot.md ("The diagnoser") explains each one; the
// YAML keys are the field names (`dripctl diagnose --config`, and under `diagnoser:` in a
// component's config).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/base/config_reader.h"

namespace drip::diagnoser {

struct DiagnoserConfig {
  // ---- Evidence: growth must stand out of Poisson sampling noise ----
  // A stack with fewer sampled allocations in the window is never a leak: one to a few
  // sampled objects are a step, not a trend.
  int64_t min_sampled_allocs = 8;
  // The rise over the window must be at least this many sampled objects' worth
  // (each sampled object weighs about sampling.mean_bytes, or its size when larger)…
  double min_rise_samples = 8;
  // …and this many standard deviations of the sampling noise of the objects that came
  // and went in the window… (also the bar for still growing: what the second half added
  // against the noise it would show had the stack stopped growing)
  double noise_sigmas = 3;
  // …and at least this many bytes, so that exact tracking (mean_bytes 0) does not call
  // a few kilobytes a leak.
  int64_t min_rise_bytes = 64 * 1024;

  // ---- Shape ----
  // Levelling off: the slope over the last third of the window below this fraction of
  // the slope over the first two thirds (by more than the noise): a cache that filled up.
  double level_off_ratio = 0.5;
  // A leak's live bytes follow a straight line at least this well (R²).
  double min_leak_steadiness = 0.5;
  // A stack that frees more than this fraction of the bytes it allocated in the window is
  // not called a leak even while it grows (a bounded structure still filling, a queue
  // backing up); it keeps its score.
  double max_leak_freed_fraction = 0.95;
  // Startup: every allocation in the first this fraction of the window (or before it).
  double startup_window_fraction = 0.15;
  // Transient: objects live on average (live bytes / allocation rate, Little's law) at
  // most this fraction of the window.
  double transient_max_lifetime_fraction = 0.1;

  // ---- Score: weights of the four pieces of evidence (they need not sum to 1) ----
  double weight_share = 0.4;          // share of the process's growth it explains
  double weight_steadiness = 0.2;     // R² of the trend
  double weight_not_levelling = 0.2;  // recent slope / earlier slope, capped at 1
  double weight_never_freed = 0.2;    // 1 - freed fraction

  // ---- Bounds ----
  // Theil–Sen slope over at most this many evenly spaced points (it is quadratic).
  int max_trend_points = 64;
  // Keep only the best this many stacks in the diagnosis (0: all); the summary counts all.
  int max_stacks = 100;
};

// Reads the keys under `prefix` ("" or "diagnoser."), leaving absent ones at their
// defaults, then checks them together. Errors name the source, line and key.
absl::Status ReadDiagnoserConfig(ConfigReader& reader, const std::string& prefix,
                                 DiagnoserConfig* config);

// Cross-field checks (also run by ReadDiagnoserConfig).
absl::Status ValidateDiagnoserConfig(const DiagnoserConfig& config);

}  // namespace drip::diagnoser
