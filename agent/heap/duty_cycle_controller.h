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
// detached. It is cut short when the hits come faster than planned. When the frees
// alone cost more than the budget, nothing can be sampled within it: the controller says
// stop, and why.
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
    double min_elapsed_to_stop_seconds = 0.3;  // frees are judged over at least this long
    // Allocation sites hit so rarely that, together, they cost at most this share of the
    // budget stay attached between windows (ColdSites): only the hot ones are detached.
    double cold_site_share = 0.05;
  };

  // Cumulative BPF counters: allocation entry + return probe hits, those of them while a
  // window was open, free probe hits.
  struct Counters {
    uint64_t alloc_hits = 0;
    uint64_t window_hits = 0;
    uint64_t free_hits = 0;
  };

  enum class Action {
    kNone,
    kOpen,   // attach the allocation probes, then OpenWindow
    kRoll,   // OpenWindow at once: the open window ends and the next begins
    kClose,  // CloseWindow, then detach the allocation probes
  };

  struct Decision {
    Action action = Action::kNone;
    bool stop = false;
    std::string stop_detail;  // set with stop
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

  double on_fraction() const;             // share of the elapsed time a window was open
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
  std::vector<Window> windows_;
  double planned_close_s_ = 0;  // of the open window
  // Detach cost measurement: alloc hits at the last close, while its detach runs.
  bool measuring_detach_ = false;
  uint64_t alloc_hits_at_close_ = 0;
  double detach_cost_sum_ = 0;
  int detaches_measured_ = 0;
};

}  // namespace drip::agent
