#include "agent/heap/duty_cycle_controller.h"

#include <algorithm>

#include "fmt/format.h"

namespace drip::agent {

DutyCycleController::DutyCycleController(const Config& config) : config_(config) {}

void DutyCycleController::StartPeriod(double now_s) {
  const double budget_hits_per_s = config_.cpu_budget * 1e9 / config_.probe_hit_cost_ns;
  const double elapsed = std::max(now_s, 1e-3);
  const double free_rate = static_cast<double>(free_hits_) / elapsed;
  // What the budget allows this period: its own share, less the frees it will see, less
  // what earlier periods overspent. Unspent budget is not carried forward: a steady share
  // of on-time keeps each stack's growth proportional to wall time, so a leak does not
  // look as if it levelled off after a generous start.
  const double surplus = budget_hits_per_s * elapsed - static_cast<double>(total_hits());
  const double period_budget = budget_hits_per_s * config_.period_seconds;
  double allowance =
      period_budget - free_rate * config_.period_seconds + std::clamp(surplus, -period_budget, 0.0);
  allowance = std::max(0.0, allowance);
  double on_s = 0;
  if (on_seconds_ <= 0) {
    on_s = std::min(config_.first_probe_seconds, config_.period_seconds);
  } else {
    const double alloc_rate_when_on = static_cast<double>(alloc_hits_) / on_seconds_;
    on_s = alloc_rate_when_on > 0 ? allowance / alloc_rate_when_on : config_.period_seconds;
  }
  period_start_s_ = now_s;
  period_on_until_s_ = now_s + std::clamp(on_s, 0.0, config_.period_seconds);
  if (!measuring_) {
    planned_on_fraction_ = (period_on_until_s_ - now_s) / config_.period_seconds;
  }
  period_start_alloc_hits_ = alloc_hits_;
  period_hit_allowance_ = on_seconds_ <= 0 ? 1e18 : allowance;
}

DutyCycleController::Decision DutyCycleController::Update(double now_s, uint64_t alloc_hits,
                                                          uint64_t free_hits, bool probes_on) {
  if (probes_on) on_seconds_ += std::max(0.0, now_s - last_s_);
  last_s_ = now_s;
  alloc_hits_ = alloc_hits;
  free_hits_ = free_hits;

  Decision decision;
  const double budget_hits_per_s = config_.cpu_budget * 1e9 / config_.probe_hit_cost_ns;
  if (now_s >= config_.min_elapsed_to_stop_seconds) {
    const double free_rate = static_cast<double>(free_hits_) / now_s;
    if (free_rate > budget_hits_per_s) {
      decision.stop = true;
      decision.stop_detail = fmt::format(
          "the target frees {:.0f} times a second; at {:.1f} µs per probe hit that alone costs "
          "{:.1f}% of a core, over the {:.1f}% budget: use preload mode (libdrip_sampler.so) "
          "or a larger --cpu-budget",
          free_rate, config_.probe_hit_cost_ns / 1000, free_rate * config_.probe_hit_cost_ns / 1e7,
          config_.cpu_budget * 100);
      return decision;
    }
  }
  // The first window only measures; once it has, plan a full period at once rather than
  // idling out the rest of the first.
  const bool measured_first = measuring_ && now_s >= period_on_until_s_;
  if (period_start_s_ < 0 || measured_first || now_s >= period_start_s_ + config_.period_seconds) {
    measuring_ = period_start_s_ < 0;
    StartPeriod(now_s);
  }
  const bool over_allowance =
      static_cast<double>(alloc_hits_ - period_start_alloc_hits_) > period_hit_allowance_;
  decision.allocation_probes_on = now_s < period_on_until_s_ && !over_allowance;
  return decision;
}

double DutyCycleController::on_fraction() const {
  return last_s_ > 0 ? std::min(1.0, on_seconds_ / last_s_) : 0;
}

double DutyCycleController::estimated_cpu_fraction() const {
  return last_s_ > 0 ? static_cast<double>(total_hits()) * config_.probe_hit_cost_ns / 1e9 / last_s_
                     : 0;
}

}  // namespace drip::agent
