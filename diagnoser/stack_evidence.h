// StackEvidence: what one (merged) stack's live bytes did over the snapshot window, in
// the terms the verdicts are decided in — growth rate, rise against the sampling noise,
// steadiness, levelling off, freed fraction, object lifetime, when it allocated.
// MeasureStack computes it; HeapDiagnoser turns it into a verdict, a score and a reason.
// docs/snapshot.md ("The diagnoser") explains each quantity.
#pragma once

#include <cstdint>
#include <vector>

#include "common/base/heap_snapshot.h"
#include "diagnoser/diagnoser_config.h"

namespace drip::diagnoser {

// The frame the evidence is measured in.
struct SnapshotWindow {
  int64_t start_ms = 0;
  int64_t end_ms = 0;                // > start_ms
  std::vector<int64_t> times;        // common read-out times (live_series.h CommonTimes)
  uint64_t sampling_mean_bytes = 0;  // T; 0 means every allocation was recorded
  // The share of the window allocations were sampled in at all (attach mode's duty
  // cycle, duty_cycle.on_fraction; 1 otherwise): each sampled object weighs 1/this more.
  double sampled_fraction = 1;
};

struct StackEvidence {
  size_t points = 0;       // read-outs on the common grid
  int64_t live_bytes = 0;  // at the end of the window
  int64_t live_allocs = 0;
  double start_level = 0;  // mean live bytes over the first twelfth of the read-outs
  double end_level = 0;    // …and over the last twelfth
  double mean_level = 0;
  double peak_level = 0;
  double growth_bytes_per_hour = 0;  // Theil–Sen slope
  double net_rise = 0;               // end level - start level
  double rise = 0;                   // min(net rise, trend × span): what it surely grew
  // Sampling noise: the variance (bytes²) that one byte of sampled objects carries, u =
  // w(1-p) for objects of weight w sampled with probability p (0 when exact; p includes
  // the duty cycle's share), and the rise needed to be significant.
  double noise_unit = 0;
  double rise_needed = 0;
  bool enough_samples = false;      // sampled_allocs >= min_sampled_allocs
  bool significant_growth = false;  // rise >= rise_needed, enough samples, 3+ read-outs
  bool significant_level = false;   // peak >= max(min_rise_bytes, min_rise_samples weights)
  double steadiness = 0;            // R² of the least-squares line over the window
  double early_slope = 0;           // bytes/h, least squares over the first two thirds
  double late_slope = 0;            // bytes/h, over the last third
  double recent_growth_ratio = 0;   // late / early; 10 when early <= 0 < late; capped at 10
  bool levelled_off = false;
  // The rise over the second half of the read-outs' span, and what it needs to stand out
  // of the sampling noise of the objects that arrived (and stayed) or left in it.
  double second_half_rise = 0;
  double second_half_rise_needed = 0;
  bool still_growing = true;  // rise >= needed (true with fewer than 3 read-outs)
  // Survival by age (from the stack's allocation cohorts): the share of the sampled
  // objects allocated in the window's first quarter, and in its second and third, still
  // live at the end (-1: not recorded). A leak keeps what it keeps at every age; a structure that
  // replaces what it holds (a cache at capacity, seen from mid-life) is still freeing its
  // oldest objects, and what it adds in the window is the turnover of its contents.
  double oldest_survival = -1;
  double next_survival = -1;
  bool oldest_still_dying = false;  // oldest < next by more than the noise allows
  double freed_fraction = 0;        // freed / allocated bytes in the window, 0..1
  double lifetime_fraction = 0;     // mean live / allocated: mean object lifetime per window
  bool allocated_early = false;     // nothing allocated after the startup part of the window
  int64_t sampled_allocs = 0;
  int64_t allocated_bytes = 0;
  int64_t freed_bytes = 0;
  double window_ms = 0;
};

StackEvidence MeasureStack(const SnapshotStack& stack, const SnapshotWindow& window,
                           const DiagnoserConfig& config);

}  // namespace drip::diagnoser
