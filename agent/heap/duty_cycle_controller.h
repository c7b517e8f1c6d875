// DutyCycleController: keeps an attach-mode snapshot within its CPU budget, and says how
// much each sampled allocation stands for.
//
// Cost. Every probe hit traps into the kernel (5-20 µs, measured at start), so the cost
// to the target is hits × cost. The free probes stay on for the whole snapshot (a tracked
// object freed while the allocation probes are off must still be seen, or it would look
// leaked); the allocation probes are attached for sampling windows and detached between
// them. The budget is a bucket of probe hits: it fills at cpu_budget / cost hits a second
// and every hit takes one out — allocations, frees, and the hits the target pays while
// the probes are being detached, which takes seconds on a busy host (HeapProbeSession).
// A window opens when the bucket holds what the window and the detach after it will
// cost; it lasts what that buys (extended while the bucket allows, up to a period), and
// then either the next window follows at once (no detach in between) or the probes are
// detached. It is cut short when the hits come faster than planned.
//
// Busy targets. When the frees alone would spend most of the budget (free_share_to_cycle),
// windows of allocations alone would be too few to tell anything; the controller then
// cycles the free probes with the allocation probes (frees_cycled): attached for a window
// and a tail after it (free_tail_seconds: objects living shorter than that die seen), then
// detached; planned from their rate inside windows. A tracked object freed between
// windows is found dead when the allocator hands out its address again (the BPF program
// checks every allocation inside a window), or counts as live. The snapshot goes on for its whole
// duration, in fewer, spaced windows, instead of stopping on its budget.
//
// Weights. Allocations are sampled only while a window is open (a gate in the BPF
// program, set apart from attaching and detaching), so a window's on-time is measured,
// not planned: however long the probes took to attach or detach and however early the
// window was cut. Window k's samples stand for every allocation from its opening to the
// next window's opening, so they weigh
//     (open[k+1] - open[k]) / (close[k] - open[k]);
// while that span still runs, (now - open[k]) / (on-time so far): 1 inside the window,
// growing through the gap after it. Each stack's estimate then follows wall time, and a
// steady leak stays a straight line whatever the windows were.
//
// Pure logic, driven by the snapshotter's clock and the BPF hit counters; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace drip::agent {

class DutyCycleController {
 public:
  struct Config {
    double cpu_budget = 0.05;         // fraction of one core
    double probe_hit_cost_ns = 5000;  // measured on this host
    // The longest window, and the shortest time from one window's opening to the next
    // one's after a detach.
    double period_seconds = 1.0;
    // A window is at least this long (and at least as long as its detach costs in hits):
    // a shorter one would spend most of its hits on switching.
    double min_window_seconds = 0.05;
    double min_elapsed_to_judge_frees_seconds = 0.3;  // the free rate is judged over this
    // Frees costing more than this share of the budget are cycled with the allocations.
    double free_share_to_cycle = 0.75;
    // Cycled free probes stay this long after a window closes: the objects it sampled that
    // live shorter than that (a request's, a ring's) die seen.
    double free_tail_seconds = 0.25;
    // Allocation sites hit so rarely that, together, they cost at most this share of the
    // budget stay attached between windows (ColdSites): only the hot ones are detached.
    double cold_site_share = 0.05;
  };

  // Cumulative BPF counters: allocation entry + return probe hits, those of them while a
  // window was open, free probe hits, those of them while a window was open.
  struct Counters {
    uint64_t alloc_hits = 0;
    uint64_t window_hits = 0;
    uint64_t free_hits = 0;
    uint64_t window_free_hits = 0;
  };

  enum class Action {
    kNone,
    kOpen,   // attach the allocation probes, then OpenWindow
    kRoll,   // OpenWindow at once: the open window ends and the next begins
    kClose,  // CloseWindow, then detach the allocation probes
    // Detach the free probes (cycled: after a window's tail; the allocation probes are
    // already detached).
    kDetachFrees,
  };

  struct Decision {
    Action action = Action::kNone;
  };

  explicit DutyCycleController(const Config& config);

  // `now_s` counts from the start of the snapshot; `detaching` is whether the allocation
  // probes of the last window are still being detached (no window opens meanwhile).
  Decision Update(double now_s, const Counters& counters, bool detaching);

  // The snapshotter opened the gate at now_s (after attaching, for kOpen), ending the
  // open window if any (kRoll). Returns the new window's number: 1, 2, ...
  uint32_t OpenWindow(double now_s);
  // The snapshotter closed the gate at now_s.
  void CloseWindow(double now_s);

  bool window_open() const { return !windows_.empty() && windows_.back().close_s < 0; }
  // The number of the latest window, 0 before the first. Only its weight still changes.
  uint32_t latest_window() const { return static_cast<uint32_t>(windows_.size()); }
  // What one allocation sampled in `window` stands for, as seen at now_s (see above); 1
  // for window 0 (not duty-cycled) and for unknown windows.
  double WindowWeight(uint32_t window, double now_s) const;

  // Which allocation sites may stay attached between windows, given each one's entry
  // probe hits per second while attached: the rarest ones, as long as together (entry and
  // return) they cost at most cold_site_share of the budget.
  std::vector<bool> ColdSites(const std::vector<double>& entry_hits_per_s) const;

  // Whether the free probes go with the allocation probes: attached for each window
  // (before it opens) and detached after its tail. Once set, it stays.
  bool frees_cycled() const { return frees_cycled_; }
  // Why the frees are cycled, in words ("" while they are not).
  const std::string& frees_cycled_reason() const { return frees_cycled_reason_; }

  double on_fraction() const;  // share of the elapsed time a window was open
  // Share of the elapsed time the free probes watched: all of it, or, once cycled, the
  // time before and the windows after.
  double free_on_fraction() const;
  double estimated_cpu_fraction() const;  // hits × cost / elapsed
  uint64_t total_hits() const { return counters_.alloc_hits + counters_.free_hits; }
  // Allocation hits that the detach after a window costs (mean of those measured; 0
  // before any).
  double detach_cost_hits() const;

 private:
  struct Window {
    double open_s = 0;
    double close_s = -1;  // -1 while open
  };

  double BudgetHitsPerSecond() const;
  // The free probes start detaching at now_s (with a window's close or on their own).
  void FreesDetaching(double now_s);
  // The hits a detach is measured in: allocation probe hits, and free probe hits once
  // the free probes go too.
  uint64_t DetachHits() const;
  // Free probe hits per second while the free probes are attached.
  double FreeRate(double now_s) const;
  // How long a window may stay open from now on before the bucket falls to the detach's
  // cost, at the rates measured so far.
  double Affordable(double now_s) const;

  Config config_;
  double last_update_s_ = 0;  // the budget has been credited up to here
  double last_s_ = 0;         // the latest time seen, windows' openings and closings too
  Counters counters_;
  double tokens_ = 0;  // probe hits the budget still allows
  // Allocation probe hits per second while a window is open (recent average); -1 before
  // the first window has measured it.
  double alloc_rate_ = -1;
  // Free probe hits per second while a window is open (recent average), once cycled.
  double window_free_rate_ = 0;
  bool frees_cycled_ = false;
  bool frees_attached_ = true;
  std::string frees_cycled_reason_;
  // Time the free probes watched, up to their last detach, and since when they are
  // attached (while they are).
  double free_watched_s_ = 0;
  double frees_attached_since_s_ = 0;
  std::vector<Window> windows_;
  double planned_close_s_ = 0;  // of the open window
  // Detach cost measurement: hits at the last close, while its detach runs (allocation
  // hits; with the free probes cycled, free hits too).
  bool measuring_detach_ = false;
  uint64_t hits_at_close_ = 0;
  double detach_cost_sum_ = 0;
  int detaches_measured_ = 0;
};

}  // namespace drip::agent
