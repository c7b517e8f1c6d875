#include "agent/heap/duty_cycle_driver.h"

#include <algorithm>
#include <cmath>

#include "agent/bpf/heap_snapshot.h"
#include "common/daemon/logging.h"

namespace drip::agent {

DutyCycleDriver::DutyCycleDriver(const DutyCycleController::Config& config,
                                 HeapProbeSession* session, const AllocatorProbePlan* plan,
                                 LiveHeapTracker* tracker, int64_t start_unix_ms)
    : controller_(config),
      session_(session),
      plan_(plan),
      tracker_(tracker),
      site_window_hits_(plan->allocs.size(), 0.0),
      start_unix_ms_(start_unix_ms) {}

void DutyCycleDriver::Step(double now_s, const std::function<double()>& clock,
                           std::string* stop_reason, std::string* stop_detail) {
  const auto counters = session_->ReadCounters();
  const auto decision = controller_.Update(
      now_s,
      {.alloc_hits = counters[DRIP_CTR_ALLOC_HITS] + counters[DRIP_CTR_RETURN_HITS],
       .window_hits = counters[DRIP_CTR_WINDOW_HITS],
       .free_hits = counters[DRIP_CTR_FREE_HITS],
       .window_free_hits = counters[DRIP_CTR_WINDOW_FREE_HITS]},
      session_->detaching());
  if (controller_.frees_cycled() && !logged_frees_cycled_) {
    logged_frees_cycled_ = true;
    Logger("agent")->info("snapshot: {}", controller_.frees_cycled_reason());
  }
  switch (decision.action) {
    case DutyCycleController::Action::kOpen: {
      // The frees first: an object sampled in the window must not be freed unseen.
      const bool frees_back = controller_.frees_cycled() && !session_->frees_attached();
      absl::Status s = frees_back ? session_->AttachFrees(*plan_) : absl::OkStatus();
      if (s.ok() && frees_back) tracker_->SetFreesWatched(true, UnixMsAt(clock()));
      if (s.ok()) s = session_->AttachAllocationProbes(*plan_);
      if (!s.ok()) {
        *stop_reason = "error";
        *stop_detail = std::string(s.message());
        return;
      }
      // The window opens once every probe is in place, not when it was decided: the
      // attach's time is not sampling time.
      const double open_s = clock();
      Open(open_s);
      site_hits_at_open_ = session_->ReadSiteHits();
      chain_open_s_ = open_s;
      Logger("agent")->debug("snapshot: sampling window {} opened at {:.3f} s (attach {:.0f} ms)",
                             controller_.latest_window(), open_s, (open_s - now_s) * 1000);
      break;
    }
    case DutyCycleController::Action::kRoll:
      Open(now_s);
      break;
    case DutyCycleController::Action::kClose:
      Close(clock());
      break;
    case DutyCycleController::Action::kDetachFrees:
      tracker_->SetFreesWatched(false, UnixMsAt(now_s));
      session_->DetachFrees();
      break;
    case DutyCycleController::Action::kNone:
      break;
  }
}

void DutyCycleDriver::UpdateWeights(double now_s) {
  const uint32_t latest = controller_.latest_window();
  if (latest != 0) tracker_->SetWindowWeight(latest, controller_.WindowWeight(latest, now_s));
}

void DutyCycleDriver::Finish(double end_s) {
  if (controller_.window_open()) {
    session_->SetSamplingWindow(0);
    controller_.CloseWindow(end_s);
  }
  const uint32_t latest = controller_.latest_window();
  if (latest != 0) {
    tracker_->SetWindowWeight(latest, controller_.WindowWeight(latest, end_s), /*final=*/true);
  }
}

int64_t DutyCycleDriver::UnixMsAt(double s) const {
  return start_unix_ms_ + static_cast<int64_t>(std::llround(s * 1000));
}

void DutyCycleDriver::Open(double open_s) {
  const uint32_t previous = controller_.latest_window();
  const uint32_t window = controller_.OpenWindow(open_s);
  session_->SetSamplingWindow(window);
  // The previous window's span ends here: its weight is final.
  if (previous != 0) {
    tracker_->SetWindowWeight(previous, controller_.WindowWeight(previous, open_s),
                              /*final=*/true);
  }
  tracker_->SetWindowWeight(window, 1);
}

void DutyCycleDriver::Close(double close_s) {
  session_->SetSamplingWindow(0);
  controller_.CloseWindow(close_s);
  // Which sites are hot, from their hits while every probe was attached; the rare ones
  // stay attached, which spares their share of the slow detach.
  const std::vector<uint64_t> hits = session_->ReadSiteHits();
  for (size_t i = 0; i < hits.size() && i < site_hits_at_open_.size(); ++i) {
    site_window_hits_[i] += static_cast<double>(hits[i] - site_hits_at_open_[i]);
  }
  site_window_s_ += close_s - chain_open_s_;
  std::vector<double> rates(site_window_hits_.size(), 0.0);
  for (size_t i = 0; i < rates.size(); ++i) {
    rates[i] = site_window_s_ > 0 ? site_window_hits_[i] / site_window_s_ : 0;
  }
  const std::vector<bool> keep = controller_.ColdSites(rates);
  session_->DetachAllocationProbes(keep);
  Logger("agent")->debug(
      "snapshot: sampling window {} closed at {:.3f} s; detaching {} of {} sites; a detach "
      "has cost {:.0f} probe hits",
      controller_.latest_window(), close_s, std::count(keep.begin(), keep.end(), false),
      keep.size(), controller_.detach_cost_hits());
}

}  // namespace drip::agent
