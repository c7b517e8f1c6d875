#include "agent/heap/duty_cycle_controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace drip::agent {
namespace {

using Action = DutyCycleController::Action;

// A target under the controller, ticking every 20 ms like the snapshotter. Each allocation
// call is two probe hits (entry, return) while the allocation probes are attached, each
// free one hit while the free probes are (always, until the controller cycles them with
// the allocation probes). Attaching is instant; detaching takes `detach_s`, the probes
// going one after another, so the hits fall off linearly meanwhile — as on a busy host,
// where each uprobe waits for an RCU grace period on its way out. The calls made while a window is
// open are what the sampler sees; each window's seen calls times its weight estimate the
// calls the target made.
struct Simulation {
  DutyCycleController controller;
  double detach_s = 0;
  // Allocation calls per second at time t.
  std::function<double(double)> alloc_calls_per_s;
  double free_calls_per_s = 0;

  double t = 0;
  double calls = 0;                    // made since the first window opened
  std::vector<double> seen = {0};      // per window number
  std::vector<double> window_lengths;  // from kOpen to kClose
  std::vector<double> close_times;
  int detaches = 0;

  explicit Simulation(const DutyCycleController::Config& config) : controller(config) {}

  void Run(double seconds) {
    constexpr double kTick = 0.02;
    bool attached = false;
    double detach_start = -1;
    double alloc_hits = 0, window_hits = 0, free_hits = 0, window_free_hits = 0;
    double opened_at = 0;
    bool frees_detached_last = false;  // the last detach took the free probes too
    bool allocs_detached_last = true;  // ... the allocation probes
    for (; t < seconds - 1e-9; t += kTick) {
      const double n = alloc_calls_per_s(t) * kTick;
      const double f = free_calls_per_s * kTick;
      if (controller.latest_window() > 0) calls += n;
      const double left = detach_start >= 0 ? std::max(0.0, 1 - (t - detach_start) / detach_s) : 0;
      if (controller.window_open()) {
        alloc_hits += 2 * n;
        window_hits += 2 * n;
        free_hits += f;
        window_free_hits += f;
        seen[controller.latest_window()] += n;
      } else {
        if (allocs_detached_last) alloc_hits += 2 * n * left;
        free_hits += frees_detached_last ? f * left : f;
      }
      const double now = t + kTick;
      const bool detaching = detach_start >= 0 && now < detach_start + detach_s;
      auto decision =
          controller.Update(now,
                            {.alloc_hits = static_cast<uint64_t>(alloc_hits),
                             .window_hits = static_cast<uint64_t>(window_hits),
                             .free_hits = static_cast<uint64_t>(free_hits),
                             .window_free_hits = static_cast<uint64_t>(window_free_hits)},
                            detaching);
      switch (decision.action) {
        case Action::kOpen:
          EXPECT_FALSE(detaching) << "a window opened while the probes were being detached";
          attached = true;
          opened_at = now;
          controller.OpenWindow(now);
          seen.push_back(0);
          break;
        case Action::kRoll:
          controller.OpenWindow(now);
          seen.push_back(0);
          break;
        case Action::kClose:
          controller.CloseWindow(now);
          window_lengths.push_back(now - opened_at);
          close_times.push_back(now);
          attached = false;
          detach_start = now;
          frees_detached_last = false;
          allocs_detached_last = true;
          ++detaches;
          break;
        case Action::kDetachFrees:
          EXPECT_FALSE(controller.window_open());
          detach_start = now;
          frees_detached_last = true;
          allocs_detached_last = false;
          break;
        case Action::kNone:
          break;
      }
    }
    (void)attached;
  }

  // The sampler's estimate of the calls made, seen at the end.
  double EstimatedCalls() const {
    double estimate = 0;
    for (uint32_t w = 1; w < seen.size(); ++w) estimate += seen[w] * controller.WindowWeight(w, t);
    return estimate;
  }
};

DutyCycleController::Config Budget(double cpu_budget) {
  return {.cpu_budget = cpu_budget, .probe_hit_cost_ns = 5000};
}

TEST(DutyCycleControllerTest, QuietTargetKeepsOneWindowOpenAllTheTimeWeighingOne) {
  Simulation sim(Budget(0.05));
  sim.alloc_calls_per_s = [](double) { return 500; };
  sim.free_calls_per_s = 500;
  sim.Run(10);
  // 500 × 3 hits/s × 5 µs = 0.75% of a core: well within 5%.
  EXPECT_GT(sim.controller.on_fraction(), 0.99);
  EXPECT_EQ(sim.detaches, 0);
  for (uint32_t w = 1; w <= sim.controller.latest_window(); ++w) {
    EXPECT_DOUBLE_EQ(sim.controller.WindowWeight(w, sim.t), 1.0) << "window " << w;
  }
}

TEST(DutyCycleControllerTest, BusyTargetIsDutyCycledWithinItsBudget) {
  Simulation sim(Budget(0.05));
  sim.alloc_calls_per_s = [](double) { return 20000; };
  sim.free_calls_per_s = 2000;
  sim.Run(30);
  // Frees cost 1%, leaving 4% for 40k allocation hits/s: on about 20% of the time.
  EXPECT_GT(sim.controller.on_fraction(), 0.1);
  EXPECT_LT(sim.controller.on_fraction(), 0.3);
  EXPECT_LE(sim.controller.estimated_cpu_fraction(), 0.055);
  EXPECT_GE(sim.controller.estimated_cpu_fraction(), 0.04);
}

// On a busy host detaching the allocator's probes takes a while, and the target keeps
// trapping meanwhile: that is paid from the budget too, and windows are made long enough
// to be worth it.
TEST(DutyCycleControllerTest, SlowDetachesArePaidFromTheBudget) {
  // 33k hits/s allowed; frees take 16k of them, allocations 32k hits/s while attached.
  Simulation sim({.cpu_budget = 0.5, .probe_hit_cost_ns = 15000});
  sim.alloc_calls_per_s = [](double) { return 16000; };
  sim.free_calls_per_s = 16000;
  sim.detach_s = 0.6;
  sim.Run(60);
  EXPECT_LE(sim.controller.estimated_cpu_fraction(), 0.52);
  EXPECT_GE(sim.controller.estimated_cpu_fraction(), 0.42);
  // 32k hits/s × 0.3 s on average per detach: ~10k hits per detach.
  EXPECT_NEAR(sim.controller.detach_cost_hits(), 9600, 1000);
  // Windows spend at least three times the detach's hits on sampling.
  for (size_t i = 1; i < sim.window_lengths.size(); ++i) {
    EXPECT_GE(sim.window_lengths[i], 0.85) << "window " << i;
  }
  EXPECT_GT(sim.controller.on_fraction(), 0.25);
}

// 50k frees a second would cost 25 % of a core with the free probes always on: the
// controller cycles them with the allocation probes instead of giving up, stays within
// the budget, and its windows' weights still add up to the calls the target made.
TEST(DutyCycleControllerTest, FreesThatAloneExceedTheBudgetAreCycledWithTheAllocations) {
  Simulation sim(Budget(0.05));
  sim.alloc_calls_per_s = [](double) { return 50000; };
  sim.free_calls_per_s = 50000;
  sim.detach_s = 0.3;
  sim.Run(60);
  ASSERT_TRUE(sim.controller.frees_cycled());
  EXPECT_NE(sim.controller.frees_cycled_reason().find("25.0%"), std::string::npos)
      << sim.controller.frees_cycled_reason();
  EXPECT_LE(sim.controller.estimated_cpu_fraction(), 0.06);
  EXPECT_GE(sim.controller.estimated_cpu_fraction(), 0.03);
  // Windows all along, not one burst at the start: each costs its switching (the
  // allocation probes' detach, 0.15 s of 150k hits/s; the frees' tail, 50k hits; their
  // detach) and a full period of sampling, about 20 s of the budget.
  EXPECT_GE(sim.controller.latest_window(), 3u);
  EXPECT_GT(sim.close_times.back(), 40);
  EXPECT_GT(sim.controller.on_fraction(), 0.005);
  EXPECT_LT(sim.controller.free_on_fraction(), 0.2);
  EXPECT_GE(sim.controller.free_on_fraction(), sim.controller.on_fraction());
  EXPECT_NEAR(sim.EstimatedCalls() / sim.calls, 1.0, 0.1);
}

// Frees that fit the budget stay watched the whole time.
TEST(DutyCycleControllerTest, FreesWithinTheBudgetStayAttached) {
  Simulation sim(Budget(0.05));
  sim.alloc_calls_per_s = [](double) { return 20000; };
  sim.free_calls_per_s = 4000;
  sim.Run(20);
  EXPECT_FALSE(sim.controller.frees_cycled());
  EXPECT_EQ(sim.controller.free_on_fraction(), 1.0);
}

TEST(DutyCycleControllerTest, LargerBudgetBuysMoreSamplingTime) {
  Simulation small(Budget(0.02));
  Simulation large(Budget(0.2));
  for (Simulation* sim : {&small, &large}) {
    sim->alloc_calls_per_s = [](double) { return 20000; };
    sim->free_calls_per_s = 100;
    sim->detach_s = 0.2;
    sim->Run(20);
  }
  EXPECT_LT(small.controller.on_fraction(), large.controller.on_fraction());
  EXPECT_LE(small.controller.estimated_cpu_fraction(), 0.021);
  EXPECT_LE(large.controller.estimated_cpu_fraction(), 0.21);
}

// The weighting error this controller exists to avoid: a window cut short (its hits came
// faster than planned, or attaching took part of it) used to weigh its allocations by the
// share of the period it was *planned* to be on, under-counting them. Weighted by the
// on-time measured, each window's allocations stand for exactly its span.
TEST(DutyCycleControllerTest, WindowCutShortWeighsItsAllocationsByItsMeasuredOnTime) {
  DutyCycleController controller(Budget(0.05));
  EXPECT_EQ(controller.OpenWindow(0.0), 1u);
  EXPECT_DOUBLE_EQ(controller.WindowWeight(1, 0.2), 1.0);  // inside the window
  controller.CloseWindow(0.3);                             // planned for 1 s, cut at 0.3 s
  // Through the gap after it, its allocations stand for the time so far...
  EXPECT_DOUBLE_EQ(controller.WindowWeight(1, 0.6), 2.0);
  // ...and once the next window opens, for the whole span between the two openings.
  EXPECT_EQ(controller.OpenWindow(1.5), 2u);
  EXPECT_DOUBLE_EQ(controller.WindowWeight(1, 9.0), 5.0);
  EXPECT_DOUBLE_EQ(controller.WindowWeight(2, 1.7), 1.0);
  EXPECT_DOUBLE_EQ(controller.WindowWeight(0, 9.0), 1.0);  // not duty-cycled
}

// Whatever the windows were — cut short by a burst of allocations, spaced out by slow
// detaches, rolled over — the weighted allocations seen add up to what the target did.
TEST(DutyCycleControllerTest, WeightedAllocationsAddUpToTheTargetsWhateverTheWindows) {
  for (double detach_s : {0.0, 0.5, 3.0}) {
    Simulation sim(Budget(0.5));
    sim.detach_s = detach_s;
    // Bursts: 8k calls/s, with 2 s at 40k calls/s every 5 s.
    sim.alloc_calls_per_s = [](double t) { return std::fmod(t, 5.0) < 2.0 ? 40000 : 8000; };
    sim.free_calls_per_s = 4000;
    sim.Run(60);
    EXPECT_GT(sim.controller.latest_window(), 5u) << "detach " << detach_s;
    EXPECT_NEAR(sim.EstimatedCalls() / sim.calls, 1.0, 0.05) << "detach " << detach_s;
    EXPECT_LE(sim.controller.estimated_cpu_fraction(), 0.55) << "detach " << detach_s;
  }
}

TEST(DutyCycleControllerTest, BurstOfAllocationsCutsTheOpenWindowShort) {
  Simulation sim(Budget(0.05));
  sim.detach_s = 0.1;
  // 1k calls/s, sampled all the time in windows of a second; from 9.5 s on, 100k calls/s:
  // the window open then (until about 10.1 s) must close at once.
  sim.alloc_calls_per_s = [](double t) { return t < 9.5 ? 1000 : 100000; };
  sim.free_calls_per_s = 100;
  sim.Run(20);
  ASSERT_FALSE(sim.close_times.empty());
  EXPECT_GT(sim.close_times[0], 9.5);
  EXPECT_LT(sim.close_times[0], 9.7);
  // The budget over the whole run holds (the burst's first window included).
  EXPECT_LE(sim.controller.estimated_cpu_fraction(), 0.055);
}

// A window that can go on within its period is extended, not followed by a short window
// of its own: a few samples of a short window would stand, with a large weight, for the
// whole gap after it.
TEST(DutyCycleControllerTest, WindowsAreExtendedRatherThanRolledWithinAPeriod) {
  Simulation sim({.cpu_budget = 0.5, .probe_hit_cost_ns = 15000});
  sim.detach_s = 0.5;
  sim.alloc_calls_per_s = [](double) { return 27000; };  // 54k hits/s, 270% of a core
  sim.free_calls_per_s = 12000;
  sim.Run(30);
  // Every window was opened (after a detach, or the first), none rolled over.
  EXPECT_LE(sim.controller.latest_window(), static_cast<uint32_t>(sim.detaches + 1));
  for (size_t i = 0; i < sim.window_lengths.size(); ++i) {
    EXPECT_GE(sim.window_lengths[i], 0.5) << "window " << i;
  }
}

TEST(DutyCycleControllerTest, RarelyCalledSitesStayAttached) {
  DutyCycleController controller(Budget(0.05));  // 10k hits/s; 5% of it: 500 hits/s
  const std::vector<bool> cold = controller.ColdSites({20000, 0, 3, 100, 400, 120});
  // Rarest first while the total (entry and return) stays within 500 hits/s: 0, 3, 100
  // and 120 calls/s make 446 hits/s; 400 more would not fit.
  EXPECT_EQ(cold, (std::vector<bool>{false, true, true, true, false, true}));
}

}  // namespace
}  // namespace drip::agent
