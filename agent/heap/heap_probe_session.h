// HeapProbeSession: the heap snapshotter's BPF programs (agent/bpf/heap_snapshot.bpf.c)
// loaded for one target process, attached in attach mode (uprobes on the allocator found
// by PlanAllocatorProbes) or preload mode (USDT probes of libdrip_sampler.so), and their
// events and counters read back. Every link is destroyed with the session, so each exit
// path of the snapshotter detaches cleanly.
//
// Attach mode samples allocations only while a sampling window is open
// (SetSamplingWindow) and the allocation probes are attached: the duty cycle attaches
// them, opens a window, closes it, and detaches them. Attaching is quick; detaching is
// not (each uprobe waits for an RCU grace period on its way out: about 0.1 s apiece on a
// busy host, seconds for the allocator's 30-odd probes), so it runs on a helper thread
// while the snapshotter keeps reading events.
//
// Not thread-safe: the snapshotter's thread owns it (the helper thread only destroys the
// links handed to it).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
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
    uint64_t sampling_mean_bytes = 512 * 1024;  // attach mode's first T
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

  // Attach mode. The free probes stay attached until DetachFrees; attaching them again,
  // after waiting for a detach still running, is a no-op while they are attached.
  absl::Status AttachFrees(const AllocatorProbePlan& plan);
  bool frees_attached() const { return !free_links_.empty(); }
  // Attaches the probes of every site of plan.allocs not attached yet (site i's BPF
  // cookie carries i, see ReadSiteHits), after waiting for a detach still running.
  // `plan` must be the same for the whole session.
  absl::Status AttachAllocationProbes(const AllocatorProbePlan& plan);
  // Starts detaching the allocation probes in the background and returns at once; sites
  // with keep[i] true stay attached (called so rarely that they cost less attached than
  // the detach would). Close the sampling window first.
  void DetachAllocationProbes(const std::vector<bool>& keep = {});
  // Starts detaching the free probes in the background, as DetachAllocationProbes does.
  void DetachFrees();
  // True while a background detach has not finished.
  bool detaching() const;
  void WaitForDetach();
  // Opens sampling window `window` (> 0; a new number for every window), or closes the
  // open one (0). Effective for the next allocator call, whichever CPU it runs on.
  void SetSamplingWindow(uint32_t window);
  // Attach mode's T from the next sample on (each CPU's countdown under way finishes at
  // the T it was drawn with); each sampled event carries the T it was taken with.
  void SetSamplingMeanBytes(uint64_t mean_bytes);
  uint64_t sampling_mean_bytes() const { return sampling_mean_bytes_; }

  // Preload mode: the shim's drip:alloc and drip:free USDT probes.
  absl::Status AttachShim(const std::string& shim_path);

  // Waits timeout_ms (less only when the ring fills past half: events wake no one), then
  // hands every event that arrived to the handlers.
  absl::Status Poll(int timeout_ms, const AllocHandler& on_alloc, const FreeHandler& on_free);

  // Whether the target ran exec(2) since the session opened: its heap, and the program
  // the probes and the unwinder's map describe, are gone.
  bool target_execed() const;

  // Totals over all CPUs since the session opened.
  Counters ReadCounters() const;
  // Entry probe hits per site of plan.allocs (same index), since the session opened.
  std::vector<uint64_t> ReadSiteHits() const;

 private:
  HeapProbeSession() = default;
  static int OnEvent(void* ctx, void* data, size_t size);
  // Destroys `doomed` on the helper thread (after the last detach has finished).
  void DetachInBackground(std::vector<bpf_link*> doomed);

  Options options_;
  heap_snapshot_bpf* skel_ = nullptr;
  ring_buffer* events_ = nullptr;
  std::vector<bpf_link*> free_links_;
  // Per site of plan.allocs: its entry and return probes' links, null when not attached.
  std::vector<std::array<bpf_link*, 2>> alloc_links_;
  std::thread detach_thread_;
  std::atomic<bool> detach_done_{true};
  std::vector<bpf_link*> shim_links_;
  bpf_link* exec_link_ = nullptr;
  const AllocHandler* on_alloc_ = nullptr;
  const FreeHandler* on_free_ = nullptr;
  uint64_t sampling_mean_bytes_ = 0;
};

}  // namespace drip::agent
