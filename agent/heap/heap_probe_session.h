// HeapProbeSession: the heap snapshotter's BPF programs (agent/bpf/heap_snapshot.bpf.c)
// loaded for one target process, attached in attach mode (uprobes on the allocator found
// by PlanAllocatorProbes) or preload mode (USDT probes of libdrip_sampler.so), and their
// events and counters read back. Every link is destroyed with the session, so each exit
// path of the snapshotter detaches cleanly.
//
// Not thread-safe: the snapshotter's thread owns it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/bpf/heap_snapshot.h"
#include "agent/heap/allocator_probe_plan.h"

struct heap_snapshot_bpf;
struct bpf_link;
struct ring_buffer;

namespace drip::agent {

class HeapProbeSession {
 public:
  struct Options {
    int pid = 0;
    uint64_t sampling_mean_bytes = 512 * 1024;  // attach mode's T
    uint32_t max_tracked = 262144;              // sampled live allocations followed
    uint32_t ring_buffer_bytes = 16 << 20;
    uint64_t max_events_per_second = 5000;  // hard limit on sampled events, per CPU
    uint32_t max_stack_bytes = DRIP_STACK_COPY_MAX;
  };

  using Counters = std::array<uint64_t, DRIP_CTR_COUNT>;
  // Called for each event, in the order the kernel produced them per CPU.
  using AllocHandler = std::function<void(const drip_heap_alloc_event&)>;
  using FreeHandler = std::function<void(const drip_heap_free_event&)>;

  static absl::StatusOr<std::unique_ptr<HeapProbeSession>> Open(const Options& options);
  ~HeapProbeSession();
  HeapProbeSession(const HeapProbeSession&) = delete;
  HeapProbeSession& operator=(const HeapProbeSession&) = delete;

  // What one uprobe hit costs on this host, in ns: a uprobe on a function of the agent's
  // own, called with and without it. Call before attaching to the target.
  absl::StatusOr<double> MeasureProbeHitCost();

  // Attach mode. The free probes stay attached for the whole session; the allocation
  // probes are switched on and off by the duty cycle.
  absl::Status AttachFrees(const AllocatorProbePlan& plan);
  absl::Status SetAllocationProbes(const AllocatorProbePlan& plan, bool on);
  bool allocation_probes_on() const { return !alloc_links_.empty(); }

  // Preload mode: the shim's drip:alloc and drip:free USDT probes.
  absl::Status AttachShim(const std::string& shim_path);

  // Waits up to timeout_ms for events and hands each to the handlers.
  absl::Status Poll(int timeout_ms, const AllocHandler& on_alloc, const FreeHandler& on_free);

  // Totals over all CPUs since the session opened.
  Counters ReadCounters() const;

 private:
  HeapProbeSession() = default;
  static int OnEvent(void* ctx, void* data, size_t size);

  Options options_;
  heap_snapshot_bpf* skel_ = nullptr;
  ring_buffer* events_ = nullptr;
  std::vector<bpf_link*> free_links_;
  std::vector<bpf_link*> alloc_links_;
  std::vector<bpf_link*> shim_links_;
  const AllocHandler* on_alloc_ = nullptr;
  const FreeHandler* on_free_ = nullptr;
};

}  // namespace drip::agent
