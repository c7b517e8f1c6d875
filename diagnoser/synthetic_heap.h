// SyntheticHeap: heap snapshots of made-up processes for the diagnoser's and dripctl's
// tests, built the way the agent sees a real one. Each allocation site is a stream of
// allocations (rate, size, lifetime); allocations are sampled by bytes exactly as the
// agent samples them (Poisson, mean T: an s-byte object with p = 1 - exp(-s/T), counted
// s/p bytes), so series are the same noisy step functions. Attach mode's duty cycle can
// be simulated too: allocations sampled only in a window at the start of each period,
// weighted as the agent weighs them (DutyCycleController). Seeded: the same options give
// the same snapshot.
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/base/heap_snapshot.h"

namespace drip::diagnoser::testing {

struct SyntheticOptions {
  int64_t start_ms = 1'700'000'000'000;
  double duration_s = 3600;
  double interval_s = 10;
  uint64_t sampling_mean_bytes = 512 * 1024;
  std::string mode = "attach";  // attach: objects from before the window are not seen
  uint32_t seed = 1;
  int64_t base_anon_bytes = 200 << 20;  // anonymous memory outside the sampled heap
  // Attach mode's duty cycle: allocations are sampled only in the first
  // `duty_on_fraction` of every `duty_period_s`, and a window's samples weigh 1 inside it,
  // (t - open) / on-time after it, period / on-time once the next window opens. 1: always
  // sampled. Objects added with AddSampledObjects are not affected.
  double duty_on_fraction = 1;
  double duty_period_s = 1;
};

struct AllocationSite {
  std::vector<StackFrame> frames;
  double from_s = 0;  // first allocation, seconds into the window (negative: before it)
  double to_s = std::numeric_limits<double>::infinity();  // last; infinity: window end
  double rate_per_s = 0;
  int64_t size = 64;
  // Lifetime: each object lives `lifetime_s` (infinity: never freed), except that a
  // `leak_fraction` of them is never freed. With `fifo_capacity` > 0 the site is a FIFO
  // cache of that many objects: an object is freed when the capacity-th next one is
  // inserted.
  double lifetime_s = std::numeric_limits<double>::infinity();
  // Lifetimes drawn from an exponential distribution of mean lifetime_s instead: a cache
  // whose entries are freed at random (idle ones evicted), its survival falling with age.
  bool exponential_lifetime = false;
  double leak_fraction = 0;
  int64_t fifo_capacity = 0;
};

class SyntheticHeap {
 public:
  explicit SyntheticHeap(SyntheticOptions options = {});

  // Returns the stack's id.
  uint64_t AddSite(const AllocationSite& site);
  // Objects that the sampler did pick up, one allocated at each of `at_s`, each living
  // `lifetime_s`. Returns the stack's id.
  uint64_t AddSampledObjects(const std::vector<StackFrame>& frames, const std::vector<double>& at_s,
                             int64_t size,
                             double lifetime_s = std::numeric_limits<double>::infinity());

  HeapSnapshot Build() const;

 private:
  struct Object {
    double at_s;
    double free_s;
    double weight;             // estimated bytes: size / p
    double count;              // estimated objects: 1 / p
    bool duty_cycled = false;  // sampled in the duty-cycle window its at_s falls in
  };
  // What a duty-cycled object sampled at at_s weighs at t_s, besides its Poisson weight.
  double DutyWeight(double at_s, double t_s) const;
  struct Stack {
    std::vector<StackFrame> frames;
    std::vector<Object> objects;
  };
  double SampleProbability(int64_t size) const;

  SyntheticOptions options_;
  std::mt19937_64 rng_;
  std::vector<Stack> stacks_;
};

// A frame with the fields a symbolized frame has; the address is derived from the name
// unless given, so equal names give equal frames.
StackFrame Frame(const std::string& function, const std::string& module = "/usr/bin/app",
                 const std::string& file = "", int line = 0, uint64_t address = 0);

}  // namespace drip::diagnoser::testing
