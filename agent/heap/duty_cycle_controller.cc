#include "agent/heap/duty_cycle_controller.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "fmt/format.h"

namespace drip::agent {
namespace {

// Allocation probe hits a window spends sampling per hit its detach costs, at least.
constexpr double kSampledPerSwitchedHits = 3;
// The allocation hit rate is averaged over about this much on-time.
constexpr double kRateAveragingSeconds = 0.5;
// The same, once the free probes are cycled: most of the switching's hits are then the
// frees' tail, which watches the window's objects die, so it is less of a waste; shorter
// windows, more of them, spread what is sampled over the snapshot. (1 sampled a third
// less of a churning fixture in the same time, 3 left a minute with four windows.)
constexpr double kSampledPerSwitchedHitsWithFreesCycled = 2;
// Frees enough to judge their rate by, before min_elapsed_to_judge_frees_seconds.
constexpr uint64_t kFreesToJudge = 1000;

}  // namespace

DutyCycleController::DutyCycleController(const Config& config) : config_(config) {
  // The first window opens at once, on one period's budget, and measures the rates every
  // later decision is made from. A smaller credit would leave it short on a busy target,
  // its few samples standing for all the time until the second window (after the first,
  // slow, detach) with a large weight; this one costs a short snapshot a few percent of
  // its budget.
  tokens_ = BudgetHitsPerSecond() * config_.period_seconds;
}

double DutyCycleController::BudgetHitsPerSecond() const {
  return config_.cpu_budget * 1e9 / config_.probe_hit_cost_ns;
}

uint64_t DutyCycleController::DetachHits() const {
  return counters_.alloc_hits + (frees_cycled_ ? counters_.free_hits : 0);
}

double DutyCycleController::FreeRate(double now_s) const {
  if (frees_cycled_) return window_free_rate_;
  return static_cast<double>(counters_.free_hits) / std::max(now_s, 1e-3);
}

double DutyCycleController::detach_cost_hits() const {
  if (detaches_measured_ > 0) return detach_cost_sum_ / detaches_measured_;
  // The first detach, still running: at least what it has cost so far.
  if (measuring_detach_) return static_cast<double>(DetachHits() - hits_at_close_);
  return 0;
}

double DutyCycleController::Affordable(double now_s) const {
  const double spare = tokens_ - detach_cost_hits();
  if (spare <= 0) return 0;
  const double drain = std::max(alloc_rate_, 0.0) + FreeRate(now_s) - BudgetHitsPerSecond();
  return drain > 0 ? spare / drain : std::numeric_limits<double>::infinity();
}

DutyCycleController::Decision DutyCycleController::Update(double now_s, const Counters& counters,
                                                          bool detaching) {
  const double budget = BudgetHitsPerSecond();
  const double dt = std::max(0.0, now_s - last_update_s_);
  last_update_s_ = std::max(last_update_s_, now_s);
  last_s_ = std::max(last_s_, now_s);
  const uint64_t hits_before = total_hits();
  const uint64_t window_hits_before = counters_.window_hits;
  const uint64_t window_free_hits_before = counters_.window_free_hits;
  counters_ = counters;
  // The hit rates while sampling, from the windows' recent past: averages over about
  // half a second of on-time, so that they follow the target's pace.
  const double open_dt = window_open() ? std::min(dt, now_s - windows_.back().open_s) : 0;
  if (open_dt > 0) {
    const double blend = alloc_rate_ < 0 ? 1 : std::min(1.0, open_dt / kRateAveragingSeconds);
    const double rate = static_cast<double>(counters_.window_hits - window_hits_before) / open_dt;
    const double free_rate =
        static_cast<double>(counters_.window_free_hits - window_free_hits_before) / open_dt;
    alloc_rate_ = alloc_rate_ < 0 ? rate : alloc_rate_ + (rate - alloc_rate_) * blend;
    window_free_rate_ += (free_rate - window_free_rate_) * blend;
  }
  tokens_ += budget * dt - static_cast<double>(total_hits() - hits_before);
  // With the frees cycled, a window's switching cost runs until its free probes are gone:
  // the allocation probes' detach, the frees' tail and the frees' own detach.
  if (measuring_detach_ && !detaching && !(frees_cycled_ && frees_attached_)) {
    detach_cost_sum_ += static_cast<double>(DetachHits() - hits_at_close_);
    ++detaches_measured_;
    measuring_detach_ = false;
  }

  // Judged as soon as enough frees were seen to tell their rate: the first window must
  // not close while the frees drain the budget unjudged.
  if (!frees_cycled_ && (now_s >= config_.min_elapsed_to_judge_frees_seconds ||
                         counters_.free_hits >= kFreesToJudge)) {
    const double free_rate = FreeRate(now_s);
    if (free_rate > config_.free_share_to_cycle * budget) {
      frees_cycled_ = true;
      window_free_rate_ = std::max(window_free_rate_, free_rate);
      // Detaches from now on take the free probes too: measured afresh.
      detach_cost_sum_ = 0;
      detaches_measured_ = 0;
      frees_cycled_reason_ = fmt::format(
          "the target frees {:.0f} times a second; at {:.1f} µs per probe hit that alone costs "
          "{:.1f}% of a core, against the {:.1f}% budget: the free probes are attached only "
          "around sampling windows",
          free_rate, config_.probe_hit_cost_ns / 1000, free_rate * config_.probe_hit_cost_ns / 1e7,
          config_.cpu_budget * 100);
    }
  }

  Decision decision;
  // Unspent budget is kept only up to what one full window and its detach cost: a
  // target that was quiet for long does not buy a burst of sampling.
  const double detach_cost = detach_cost_hits();
  const double alloc_rate = std::max(alloc_rate_, 0.0);
  // What a window's probes hit per second: allocations, and the frees once they cycle.
  const double window_rate = alloc_rate + (frees_cycled_ ? window_free_rate_ : 0);
  tokens_ = std::min(tokens_, std::max(budget * config_.period_seconds,
                                       detach_cost + window_rate * config_.period_seconds));

  if (window_open()) {
    // Hits coming faster than planned: close while the bucket still pays the detach.
    if (tokens_ < detach_cost) {
      decision.action = Action::kClose;
    } else if (now_s >= planned_close_s_) {
      // Sampling on needs no detach: go on if the bucket allows it. Within a period the
      // window is extended (a short window of its own would weigh its few samples over
      // the whole gap after it); a window that has lasted a period is rolled over, so
      // that a window's samples stand for the time around them.
      const double affordable = Affordable(now_s);
      if (affordable < config_.min_window_seconds) {
        decision.action = Action::kClose;
      } else if (now_s - windows_.back().open_s >= config_.period_seconds) {
        decision.action = Action::kRoll;
      } else {
        planned_close_s_ =
            std::min(windows_.back().open_s + config_.period_seconds, now_s + affordable);
      }
    }
    return decision;
  }
  if (detaching) return decision;
  if (frees_cycled_ && frees_attached_) {
    // Cycled: the free probes outlast the window by a tail, in which the objects it
    // sampled that live shorter than the tail die seen; then they go, and come back with
    // the next window.
    const double closed_s = windows_.empty() ? 0 : windows_.back().close_s;
    if (now_s < closed_s + config_.free_tail_seconds) return decision;
    decision.action = Action::kDetachFrees;
    if (!measuring_detach_) {
      measuring_detach_ = true;
      hits_at_close_ = DetachHits();
    }
    FreesDetaching(now_s);
    return decision;
  }
  if (windows_.empty()) {
    decision.action = Action::kOpen;
    return decision;
  }
  if (now_s < windows_.back().open_s + config_.period_seconds) return decision;
  // A window worth its detach: three quarters of its probes' hits sample.
  double shortest = config_.min_window_seconds;
  if (window_rate > 0) {
    const double ratio =
        frees_cycled_ ? kSampledPerSwitchedHitsWithFreesCycled : kSampledPerSwitchedHits;
    shortest = std::max(shortest, ratio * detach_cost / window_rate);
  }
  shortest = std::min(shortest, config_.period_seconds);
  if (Affordable(now_s) >= shortest) decision.action = Action::kOpen;
  return decision;
}

uint32_t DutyCycleController::OpenWindow(double now_s) {
  if (window_open()) windows_.back().close_s = now_s;
  last_s_ = std::max(last_s_, now_s);
  windows_.push_back({now_s, -1});
  if (!frees_attached_) {  // attached again just before the window opened
    frees_attached_ = true;
    frees_attached_since_s_ = now_s;
  }
  planned_close_s_ = now_s + std::min(config_.period_seconds, Affordable(now_s));
  return static_cast<uint32_t>(windows_.size());
}

void DutyCycleController::CloseWindow(double now_s) {
  if (!window_open()) return;
  windows_.back().close_s = std::max(now_s, windows_.back().open_s);
  last_s_ = std::max(last_s_, now_s);
  measuring_detach_ = true;
  hits_at_close_ = DetachHits();
}

void DutyCycleController::FreesDetaching(double now_s) {
  if (!frees_attached_) return;
  frees_attached_ = false;
  free_watched_s_ += std::max(0.0, now_s - frees_attached_since_s_);
}

double DutyCycleController::WindowWeight(uint32_t window, double now_s) const {
  if (window == 0 || window > windows_.size()) return 1;
  const Window& w = windows_[window - 1];
  const double span_end = window < windows_.size() ? windows_[window].open_s : now_s;
  const double on_s = (w.close_s >= 0 ? w.close_s : now_s) - w.open_s;
  if (on_s <= 0) return 1;  // nothing can have been sampled in it yet
  return std::max(1.0, (span_end - w.open_s) / on_s);
}

std::vector<bool> DutyCycleController::ColdSites(
    const std::vector<double>& entry_hits_per_s) const {
  std::vector<size_t> order(entry_hits_per_s.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return entry_hits_per_s[a] < entry_hits_per_s[b]; });
  std::vector<bool> cold(entry_hits_per_s.size(), false);
  const double allowed = config_.cold_site_share * BudgetHitsPerSecond();
  double used = 0;
  for (size_t i : order) {
    const double cost = 2 * std::max(0.0, entry_hits_per_s[i]);  // entry and return
    if (used + cost > allowed) break;
    used += cost;
    cold[i] = true;
  }
  return cold;
}

double DutyCycleController::on_fraction() const {
  if (last_s_ <= 0) return 0;
  double on_s = 0;
  for (const Window& w : windows_) on_s += (w.close_s >= 0 ? w.close_s : last_s_) - w.open_s;
  return std::clamp(on_s / last_s_, 0.0, 1.0);
}

double DutyCycleController::free_on_fraction() const {
  if (!frees_cycled_ || last_s_ <= 0) return 1;
  const double on_s =
      free_watched_s_ + (frees_attached_ ? std::max(0.0, last_s_ - frees_attached_since_s_) : 0);
  return std::clamp(on_s / last_s_, 0.0, 1.0);
}

double DutyCycleController::estimated_cpu_fraction() const {
  return last_s_ > 0 ? static_cast<double>(total_hits()) * config_.probe_hit_cost_ns / 1e9 / last_s_
                     : 0;
}

}  // namespace drip::agent
