// SamplingRatePlanner: chooses an attach-mode snapshot's sampling period T (mean bytes
// between samples) from the allocation rate it measures, so that the window collects
// enough sampled allocations to decide whatever the target's rate.
//
// A fixed T is wrong for almost every process: at 512 KiB a service leaking 20 KB/s
// shows 1-2 sampled objects of the leak in a minute ("too little to judge"), while at
// 4 KiB a process allocating 1 GB/s would send 250 k events a second. The cost to the
// target barely depends on T in attach mode (every allocator call traps, sampled or
// not); a sampled allocation costs a stack copy in the trap and an unwind in the agent.
// So T is sized for a steady number of sampled allocations per second of wall time:
//     T = allocation bytes per second of open window / target samples per second x f,
// where f is the share of the time windows are open (a busy target's duty cycle may open
// them 2 % of the time: its windows may sample fifty times as densely, up to
// max_samples_per_second, for the same cost to the agent and almost none to the target,
// which traps on every call anyway),
// clamped to [256 B, 64 MiB] and kept to powers of two, changed only when the measured rate
// asks for at least twice or half the current T (a noisy rate must not make T flap;
// every sampled event carries its own T, so estimates stay unbiased across a change).
//
// When the collector's detector has already measured the target's growth G, the question
// is where that growth is, not what the process allocates, and G alone sizes T: a leak of
// rate G leaves G x window / T sampled objects, so
//     T = G x window / growth_samples,
// however much the process allocates besides. A service allocating 15 MB/s and growing
// 5 MB/s is sampled about 20 times a second, not 1000 (in preload mode each sample is
// the snapshot's cost to the target). Within two bounds: never more than
// max_samples_per_second (a slow leak under heavy churn, 1 KiB/s next to 45 MB/s, would
// ask for 45 k a second; what T cannot give within that, the window's self-extension
// does, as HeapDiagnoser reads a window too short for G as inconclusive), and never fewer
// than min_samples_per_second, so that the stacks around the leak are seen too.
//
// Pure logic, fed cumulative counters by the snapshotter; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>

namespace drip::agent {

class SamplingRatePlanner {
 public:
  struct Config {
    double target_samples_per_second = 1000;
    uint64_t min_mean_bytes = 256;
    // High enough that a process allocating GB/s is sampled about as often as one
    // allocating MB/s: in preload mode each sampled allocation (and its free) is a
    // uprobe trap, so the samples per second are the snapshot's cost to the target.
    uint64_t max_mean_bytes = 64ull << 20;
    uint64_t initial_mean_bytes = 64 * 1024;
    // The rate is measured over at least this much open-window time before T is set,
    // and T is reconsidered after as much again each time.
    double min_measure_seconds = 0.5;
    // The growth already measured on the target (bytes/s; 0: unknown) and the window it
    // must show in: T is kept to at most G x window / growth_samples.
    double expected_growth_bytes_per_second = 0;
    double window_seconds = 0;
    double growth_samples = 32;
    // Sizing for G stays within these (sampled allocations per second).
    double max_samples_per_second = 3000;
    double min_samples_per_second = 20;
  };

  explicit SamplingRatePlanner(const Config& config);

  uint64_t mean_bytes() const { return mean_bytes_; }

  // `window_seconds`: total time sampling windows have been open so far; `window_bytes`:
  // total bytes asked of the allocator in them; `on_fraction`: the share of the elapsed
  // time they were open. Returns the new T when it should change.
  std::optional<uint64_t> Update(double window_seconds, uint64_t window_bytes,
                                 double on_fraction = 1);

 private:
  Config config_;
  uint64_t mean_bytes_;
  double last_seconds_ = 0;
  uint64_t last_bytes_ = 0;
};

}  // namespace drip::agent
