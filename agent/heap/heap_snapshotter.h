// HeapSnapshotter: takes one live heap snapshot of a running process (docs/snapshot.md).
//
// Attach mode works on any process: uprobes on its allocator, byte-sampled tracking of
// allocations and their frees, the allocation probes duty-cycled to a CPU budget.
// Preload mode is near-free: the target's libdrip_sampler.so samples in-process and only
// its sampled events reach the agent. Without a mode the snapshotter picks preload when
// the shim is loaded. Each sampled allocation's stack is unwound and symbolized on the
// host while the target runs; live bytes per stack are read out every interval with the
// target's RSS.
//
// The snapshot ends at its duration (extended while the evidence is short, up to a
// limit), when the target exits, on the caller's stop flag
// (SIGTERM), over the CPU budget, or on an error after data was gathered; every path
// detaches the probes (HeapProbeSession's destructor) and says why in stop_reason.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/base/heap_snapshot.h"

namespace drip::agent {

struct SnapshotOptions {
  int pid = 0;
  std::string proc_root = "/proc";  // where the target's PID directory lives
  double duration_seconds = 60;
  std::string mode;          // "attach", "preload" or "" (preload when the shim is loaded)
  double cpu_budget = 0.05;  // attach mode: fraction of one core
  // Attach mode's T; 0 (the default): sized from the allocation rate measured while the
  // snapshot runs (SamplingRatePlanner). Preload mode samples at the shim's T.
  uint64_t sampling_mean_bytes = 0;
  double interval_seconds = 0;  // 0: duration / 60, within [0.25 s, 10 s]
  uint32_t max_tracked = 262144;
  // Per CPU. Sampled events over it are dropped; those kept then stand for the dropped
  // ones too (their weight grows by sampled / kept), so estimates stay unbiased.
  uint64_t max_events_per_second = 5000;
  int max_frames = 64;
  size_t max_stacks = 20000;
  double max_duration_seconds = 3600;  // hard limit whatever was asked
  // While the window so far would leave the diagnoser inconclusive, the snapshot doubles
  // its duration, up to this many seconds in all (0 or <= duration: never extends).
  double extend_up_to_seconds = 0;
  // The growth the collector's detector measured on the target (bytes/h; 0: unknown).
  // With it, T is kept small enough for the window to sample a leak of that rate often
  // enough to decide (within a cost limit), and a window that could not yet resolve it
  // counts as short of evidence.
  double expected_growth_bytes_per_hour = 0;
  // Copied into the snapshot's target when the collector asked for it.
  std::string host;
  std::string component;
  std::string instance;
};

// Fails when nothing could be gathered: bad options, the target is gone, the kernel
// refuses the probes, preload mode without the shim. Otherwise a snapshot, whose
// stop_reason says why it ended.
absl::StatusOr<HeapSnapshot> TakeHeapSnapshot(const SnapshotOptions& options,
                                              const std::atomic<bool>* stop_requested);

}  // namespace drip::agent
