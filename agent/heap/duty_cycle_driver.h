// DutyCycleDriver: attach mode's duty cycle, applied. Each step reads the BPF hit
// counters, asks DutyCycleController what to do and does it to the probes: attach the
// allocation probes (and the free probes, once the controller cycles them) and then open a
// sampling window (its opening time is taken once every probe is in place), roll it over,
// or close it and start detaching the probes in the background — all but the rarely called
// allocation sites, which stay attached. It keeps the tracker's window weights current:
// the latest window's before every read-out, final ones as each window's span ends and at
// the snapshot's end; and tells it when the free probes watch.
//
// Times are seconds since the snapshot started. Not thread-safe: the snapshotter's thread
// owns it, the session, the plan and the tracker, which must outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "agent/heap/allocator_probe_plan.h"
#include "agent/heap/duty_cycle_controller.h"
#include "agent/heap/heap_probe_session.h"
#include "agent/heap/live_heap_tracker.h"

namespace drip::agent {

class DutyCycleDriver {
 public:
  // `start_unix_ms`: the snapshot's start, the tracker's time base.
  DutyCycleDriver(const DutyCycleController::Config& config, HeapProbeSession* session,
                  const AllocatorProbePlan* plan, LiveHeapTracker* tracker, int64_t start_unix_ms);

  // One step at now_s; `clock` reads the time again after an attach. Sets *stop_reason
  // ("error") and *stop_detail when the snapshot must end.
  void Step(double now_s, const std::function<double()>& clock, std::string* stop_reason,
            std::string* stop_detail);

  // Before a read-out at now_s: the latest window's allocations stand for the time so far.
  void UpdateWeights(double now_s);

  // The snapshot ends at end_s: the window (if open) closes, every weight is final.
  // Detaching is left to the session's destructor.
  void Finish(double end_s);

  const DutyCycleController& controller() const { return controller_; }

 private:
  int64_t UnixMsAt(double s) const;
  void Open(double open_s);
  void Close(double close_s);

  DutyCycleController controller_;
  HeapProbeSession* session_;
  const AllocatorProbePlan* plan_;
  LiveHeapTracker* tracker_;
  // Entry probe hits per site over the windows so far (every probe attached then): which
  // sites are rare enough to stay attached.
  std::vector<uint64_t> site_hits_at_open_;
  std::vector<double> site_window_hits_;
  double site_window_s_ = 0;
  double chain_open_s_ = 0;  // when the probes were last attached and a window opened
  bool logged_frees_cycled_ = false;
  int64_t start_unix_ms_;
};

}  // namespace drip::agent
