#include "agent/heap/duty_cycle_controller.h"

#include <gtest/gtest.h>

namespace drip::agent {
namespace {

// Simulates a target with fixed allocator and free call rates under the controller for
// `seconds`, ticking every 20 ms like the snapshotter; returns the controller.
struct Simulation {
  double on_seconds = 0;
  bool stopped = false;
  std::string stop_detail;
  DutyCycleController controller;
  uint64_t alloc_hits = 0;
  uint64_t free_hits = 0;

  explicit Simulation(const DutyCycleController::Config& config) : controller(config) {}

  void Run(double seconds, double alloc_calls_per_s, double free_calls_per_s) {
    bool on = false;
    double alloc_carry = 0, free_carry = 0;
    for (double t = 0; t < seconds; t += 0.02) {
      if (on) {
        alloc_carry += 2 * alloc_calls_per_s * 0.02;  // entry + return probe per call
        on_seconds += 0.02;
      }
      free_carry += free_calls_per_s * 0.02;
      alloc_hits = static_cast<uint64_t>(alloc_carry);
      free_hits = static_cast<uint64_t>(free_carry);
      auto decision = controller.Update(t + 0.02, alloc_hits, free_hits, on);
      if (decision.stop) {
        stopped = true;
        stop_detail = decision.stop_detail;
        return;
      }
      on = decision.allocation_probes_on;
    }
  }
};

TEST(DutyCycleControllerTest, QuietTargetKeepsAllocationProbesOnAllTheTime) {
  Simulation sim({.cpu_budget = 0.05, .probe_hit_cost_ns = 5000});
  sim.Run(10, /*alloc_calls_per_s=*/500, /*free_calls_per_s=*/500);
  EXPECT_FALSE(sim.stopped);
  // 500 × 3 hits/s × 5 µs = 0.75% of a core: well within 5%.
  EXPECT_GT(sim.controller.on_fraction(), 0.95);
}

TEST(DutyCycleControllerTest, BusyTargetIsDutyCycledWithinItsBudget) {
  Simulation sim({.cpu_budget = 0.05, .probe_hit_cost_ns = 5000});
  sim.Run(30, /*alloc_calls_per_s=*/20000, /*free_calls_per_s=*/2000);
  ASSERT_FALSE(sim.stopped);
  // Frees cost 1%, leaving 4% for 40k allocation hits/s: on about 20% of the time.
  EXPECT_GT(sim.controller.on_fraction(), 0.1);
  EXPECT_LT(sim.controller.on_fraction(), 0.3);
  EXPECT_LE(sim.controller.estimated_cpu_fraction(), 0.055);
  EXPECT_GE(sim.controller.estimated_cpu_fraction(), 0.035);
}

TEST(DutyCycleControllerTest, StopsAndSaysWhyWhenFreesAloneExceedTheBudget) {
  Simulation sim({.cpu_budget = 0.05, .probe_hit_cost_ns = 5000});
  sim.Run(10, /*alloc_calls_per_s=*/50000, /*free_calls_per_s=*/50000);
  ASSERT_TRUE(sim.stopped);
  EXPECT_NE(sim.stop_detail.find("preload"), std::string::npos) << sim.stop_detail;
  EXPECT_NE(sim.stop_detail.find("25.0%"), std::string::npos) << sim.stop_detail;
}

TEST(DutyCycleControllerTest, LargerBudgetBuysMoreProbeTime) {
  Simulation small({.cpu_budget = 0.02, .probe_hit_cost_ns = 5000});
  Simulation large({.cpu_budget = 0.2, .probe_hit_cost_ns = 5000});
  small.Run(20, 20000, 100);
  large.Run(20, 20000, 100);
  EXPECT_LT(small.controller.on_fraction(), large.controller.on_fraction());
  EXPECT_LE(large.controller.estimated_cpu_fraction(), 0.21);
}

}  // namespace
}  // namespace drip::agent
