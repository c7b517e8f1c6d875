// SnapshotDiff: what grew in one process between two heap snapshots of it, taken at two
// points in time (`dripctl diagnose NEW --base OLD`, a leak report's first and latest
// snapshots). Pure computation on two snapshots and their diagnoses.
//
// Why not subtract the two snapshots' live bytes: a snapshot sees only the allocations of
// its own window (attach mode's probes and preload mode's USDT probes are attached for the
// window alone), so a leak steady at r bytes/h leaves about r x window live in each of two
// equal windows, and their difference is noise. What each window does tell is how fast
// each site was growing, and whether that growth was a leak's or a cache's turnover (the
// diagnoser's verdict). So the growth between the two windows' ends is integrated from
// the two sustained rates, linearly between them (a trapezoid):
//
//   grew = (r_base + r_new) / 2 x (new.end - base.end)
//
// where a site's sustained rate is its trend when its verdict is leak or inconclusive (it
// grew and nothing showed it stopping) and 0 when it is a cache, a startup buffer or
// transient churn: their rise within a window is not net growth of the process. A site
// one window did not see counts 0 there. The process's own anonymous memory at the two
// ends is measured, not estimated, and is set beside the sites' sum.
//
// Sites are matched by their frames as the binaries name them (build-id or module, plus
// the offset in it; the address only for frames outside any module), never by symbol
// names, which one snapshot may have resolved and the other not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/base/heap_snapshot.h"
#include "diagnoser/diagnosis.h"

namespace drip::diagnoser {

// What one snapshot's diagnosis said of a site.
struct SiteInWindow {
  Verdict verdict = Verdict::kTransient;
  int64_t live_bytes = 0;  // at the end of that window, of what the window allocated
  int64_t live_allocs = 0;
  double growth_bytes_per_hour = 0;     // the window's trend
  double sustained_bytes_per_hour = 0;  // what counts as net growth (see above)
  double allocated_bytes_per_hour = 0;
  int rank = 0;  // in that diagnosis, 1 is the likeliest leak; 0 when it ranked none
};

struct SiteChange {
  std::vector<StackFrame> frames;    // innermost first, allocator frames dropped
  std::optional<SiteInWindow> base;  // unset: the base window saw nothing of it
  std::optional<SiteInWindow> now;
  // Estimated between the ends of the two windows.
  double grew_bytes = 0;
  double grew_objects = 0;
  double allocated_bytes = 0;
  double allocated_objects = 0;
};

struct SnapshotDiff {
  int64_t base_end_ms = 0;
  int64_t now_end_ms = 0;
  // anon RSS (+ swap) at the end of each window; unset when a snapshot did not read it.
  std::optional<int64_t> base_anon_bytes;
  std::optional<int64_t> now_anon_bytes;
  double grew_bytes = 0;          // summed over the sites
  std::vector<SiteChange> sites;  // most growth first, then by the new window's live bytes
  std::string summary;            // one line for people
};

// INVALID_ARGUMENT, one line, when the two are not snapshots of one process instance
// (host, pid, the process's start time; its executable when a start time is unknown), or
// when `now` does not end after `base`. The messages call them "the base" and "the new
// snapshot"; callers add the file names.
absl::StatusOr<SnapshotDiff> DiffSnapshots(const HeapSnapshot& base,
                                           const Diagnosis& base_diagnosis, const HeapSnapshot& now,
                                           const Diagnosis& now_diagnosis);

}  // namespace drip::diagnoser
