// A live heap snapshot of one process: what drip-agent's heap snapshotter saw of the
// target's sampled allocations over a window, per allocating call stack. The agent
// produces it (attach or preload mode), the diagnoser ranks its stacks, dripctl and the
// collector read it. docs/snapshot.md documents the JSON form (heap_snapshot_json.h) and
// its protobuf twin drip.v1.HeapSnapshot (heap_snapshot_proto.h).
//
// Only stacks and sizes: a snapshot never holds the target's memory contents.
// Byte and count figures are estimates of the whole heap, unbiased under Poisson sampling
// by bytes: a sampled allocation of s bytes, sampled with probability p = 1 - exp(-s/T),
// counts s/p bytes and 1/p allocations (T = sampling.mean_bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace drip {

// One resolved frame. Unknown frames keep module + module_offset + build_id so that they
// can be symbolized later, off the host.
struct StackFrame {
  uint64_t address = 0;        // the pc in the target's address space
  std::string function;        // demangled; empty when no symbol covers the pc
  std::string module;          // path of the mapped file ("[vdso]", "" when unmapped)
  std::string build_id;        // hex GNU build-id of the module; empty when it has none
  uint64_t module_offset = 0;  // pc relative to the module's load bias (an ELF address)
  std::string file;            // source file from DWARF; empty when unknown
  int line = 0;                // 0 when unknown
};

// Estimated live bytes and objects of one stack at one instant of the window.
struct LivePoint {
  int64_t t_ms = 0;  // Unix milliseconds
  int64_t live_bytes = 0;
  int64_t live_allocs = 0;
};

// One slice of the window by allocation time: how many sampled allocations it had, and how
// many of them were still live at the end. Survival by age is what tells a structure
// replacing what it holds (its oldest objects keep being freed) from a leak (they stay).
inline constexpr size_t kMaxAllocationCohorts = 64;
struct AllocationCohort {
  int64_t allocs = 0;
  int64_t live = 0;
};

struct SnapshotStack {
  uint64_t id = 0;                 // unique within the snapshot
  std::vector<StackFrame> frames;  // innermost first; allocator frames included
  std::vector<LivePoint> series;   // one point per read-out interval, in time order
  // Sampled events seen in the window (raw counts, not estimates).
  int64_t sampled_allocs = 0;
  int64_t sampled_frees = 0;
  // Estimated bytes allocated and freed by this stack during the window.
  int64_t allocated_bytes = 0;
  int64_t freed_bytes = 0;
  int64_t first_alloc_ms = 0;  // first and last sampled allocation (0: none)
  int64_t last_alloc_ms = 0;
  // The window cut into equal slices, oldest first (empty when not recorded).
  std::vector<AllocationCohort> cohorts;
};

// The target's own memory, read from /proc/PID/status each interval.
struct RssPoint {
  int64_t t_ms = 0;
  int64_t rss_bytes = 0;   // VmRSS
  int64_t anon_bytes = 0;  // RssAnon + VmSwap: the unreclaimable part
};

struct SnapshotTarget {
  int pid = 0;
  std::string comm;
  std::string exe;
  int64_t start_time_ms = 0;  // when the process started (Unix ms); 0 when unknown
  std::string host;
  std::string component;  // set when the collector asked for the snapshot
  std::string instance;
  // "glibc", "jemalloc", "tcmalloc", "mimalloc" or "executable" (its own or static): who
  // serves malloc; in preload mode, the allocator the shim forwards to. "" when unknown.
  std::string allocator;
  // The growth the collector's detector measured on the component before it asked for the
  // snapshot (bytes/h; 0: unknown, as for a snapshot taken by hand without
  // --expect-growth). The window is sized to resolve it, and a window too short or too
  // thinly sampled to show it is never read as "no leak found".
  double expected_growth_bytes_per_hour = 0;
};

// How attach mode kept the target within its CPU budget (docs/snapshot.md).
struct DutyCycle {
  double cpu_budget = 0;              // fraction of one core the probes may cost the target
  double probe_hit_cost_ns = 0;       // measured on this host before attaching
  double on_fraction = 1;             // share of the window the allocation probes were on
  uint64_t probe_hits = 0;            // every allocator probe hit in the window
  double estimated_cpu_fraction = 0;  // probe_hits * cost / window, as a fraction of a core
  // Share of the window the free probes watched: 1, unless the target's frees alone cost
  // most of the budget and the free probes were attached only around sampling windows.
  // A tracked object freed unseen is then found dead when its address is handed out again
  // (reused_address_frees), or stays counted live.
  double free_on_fraction = 1;
};

inline constexpr size_t kMaxUnsampledCalls = 64;
inline constexpr size_t kMaxUnsampledCallName = 128;

struct HeapSnapshot {
  static constexpr int kVersion = 1;
  int version = kVersion;
  SnapshotTarget target;
  std::string mode;  // "attach" or "preload"
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  double interval_seconds = 0;       // between read-outs
  uint64_t sampling_mean_bytes = 0;  // T above
  DutyCycle duty_cycle;
  // Why the snapshot ended: "duration", "target_exited", "budget", "signal", "event_limit",
  // "error"; stop_detail says more in words.
  std::string stop_reason;
  std::string stop_detail;
  uint64_t sampled_allocs = 0;
  uint64_t matched_frees = 0;
  // Of matched_frees, those found by the allocator handing the address out again.
  uint64_t reused_address_frees = 0;
  uint64_t dropped_events = 0;  // lost in the ring buffer or over the events/s limit
  // Of dropped_events, sampled allocations lost while the agent fell behind (its ring
  // buffer full): not spread over the window like those over the events/s limit, but a
  // gap in it, across which a leak looks levelled off.
  uint64_t lost_while_behind = 0;
  uint64_t unwind_failures = 0;  // sampled allocations whose stack could not be unwound
  // Allocator entry points the program calls that this snapshot could not sample, by name
  // (preload mode: jemalloc's mallocx/sdallocx, tcmalloc's tc_*; docs/snapshot.md).
  // Allocations through them are missing; blocks freed through them look live.
  std::vector<std::string> unsampled_calls;
  std::vector<RssPoint> rss;
  std::vector<SnapshotStack> stacks;
};

}  // namespace drip
