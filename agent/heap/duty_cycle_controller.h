// DutyCycleController: keeps an attach-mode snapshot within its CPU budget. Every probe
// hit traps into the kernel (about 5 µs here, measured at start), so the cost to the
// target is hits × cost. The free probes stay on for the whole snapshot (a tracked object
// freed while the allocation probes are off must still be seen, or it would look leaked);
// the allocation probes are switched on for a share of each period sized from the hit
// rates measured so far, with the budget left over or overspent carried forward. When the
// frees alone cost more than the budget, nothing can be sampled within it: the controller
// says stop, and why.
//
// Pure logic, driven by the snapshotter's clock and the BPF hit counters; not thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace drip::agent {

class DutyCycleController {
 public:
  struct Config {
    double cpu_budget = 0.05;         // fraction of one core
    double probe_hit_cost_ns = 5000;  // measured on this host
    double period_seconds = 1.0;
    double first_probe_seconds = 0.1;          // the first on-window, before any rate is known
    double min_elapsed_to_stop_seconds = 0.3;  // frees are judged over at least this long
  };

  struct Decision {
    bool allocation_probes_on = false;
    bool stop = false;
    std::string stop_detail;  // set with stop
  };

  explicit DutyCycleController(const Config& config);

  // `now_s` counts from the start of the snapshot; hit counts are cumulative totals
  // (allocation entry + return hits, free hits); `probes_on` is the state since the last
  // call. Returns what the allocation probes should be until the next call.
  Decision Update(double now_s, uint64_t alloc_hits, uint64_t free_hits, bool probes_on);

  double on_fraction() const;  // share of the elapsed time probes were on
  // The share of the current period the allocation probes are planned on (1 while the
  // first window measures): allocations seen now stand for 1/this as many.
  double planned_on_fraction() const { return planned_on_fraction_; }
  double estimated_cpu_fraction() const;  // hits × cost / elapsed
  uint64_t total_hits() const { return alloc_hits_ + free_hits_; }

 private:
  void StartPeriod(double now_s);

  Config config_;
  double last_s_ = 0;
  double on_seconds_ = 0;
  uint64_t alloc_hits_ = 0;
  uint64_t free_hits_ = 0;
  double period_start_s_ = -1;
  double period_on_until_s_ = 0;
  uint64_t period_start_alloc_hits_ = 0;
  double period_hit_allowance_ = 0;
  bool measuring_ = false;  // in the first, measuring window
  double planned_on_fraction_ = 1;
};

}  // namespace drip::agent
