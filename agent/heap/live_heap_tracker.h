// LiveHeapTracker: the snapshotter's bookkeeping of sampled allocations. Each sampled
// allocation is charged to its call stack with its Poisson weight (an allocation of s
// bytes sampled with probability p = 1 - exp(-s/T) stands for s/p bytes and 1/p objects,
// which makes the per-stack sums unbiased estimates for the whole heap); its free takes
// the same weight off. At every read-out each stack gets a point of its live bytes and
// objects, so each stack has a live-bytes time series.
//
// Attach mode's duty cycle samples allocations only in sampling windows, and what a
// window's allocations stand for is known only as time goes on (DutyCycleController:
// they stand for the time until the next window opens). So each allocation is filed
// under its window, and SetWindowWeight scales all of a window's allocations — live,
// allocated and freed alike, so that live = allocated - freed holds — until the window's
// weight is final. Window 0 (preload mode, or no duty cycle) always weighs 1.
//
// Frees watched part of the time. When attach mode detaches the free probes between
// windows (DutyCycleController, busy targets), an object freed meanwhile is never seen
// freed. The tracker then estimates each stack's unseen deaths from what it did see: its
// hazard h (deaths per object-ms), fitted to the deaths each watch saw among the stack's
// objects allocated before it began, by how long they had gone unwatched: of objects
// through u unwatched ms, exp(-h u) are still alive, and a watch of d ms sees about
// h d exp(-h u) of each die (a Poisson likelihood, maximized over h; young and old
// objects together tell a fast turnover from a slow one). Each live object is then counted
// dead with probability 1 - exp(-h u). A
// leak's objects never die while watched (h = 0: nothing is taken off); a cache's turn over
// at the rate its watched evictions show. Series points, freed bytes and cohorts carry the
// estimate.
//
// Pure bookkeeping (no I/O, no BPF): the snapshotter feeds it unwound, symbolized events.
// Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/base/heap_snapshot.h"

namespace drip::agent {

class LiveHeapTracker {
 public:
  // Stacks beyond max_stacks are charged to one "[other stacks]" stack rather than
  // growing without bound.
  explicit LiveHeapTracker(size_t max_stacks = 20000) : max_stacks_(max_stacks) {}

  // The id of the stack with these pcs (innermost first), or nullopt-like 0 when it is
  // not known yet; AddStack registers it with its symbolized frames.
  uint64_t FindStack(const std::vector<uint64_t>& pcs) const;
  uint64_t AddStack(const std::vector<uint64_t>& pcs, std::vector<StackFrame> frames);
  bool full() const { return stacks_.size() >= max_stacks_; }
  uint64_t overflow_stack();

  // An allocation sampled in sampling window `window`; it counts that window's weight
  // (1 until set) times `extra_weight` (the share of sampled events dropped by the hard
  // limits: sampled / kept).
  void OnAlloc(uint64_t stack_id, uint64_t address, uint64_t size, uint64_t mean_bytes,
               int64_t t_ms, uint32_t window = 0, double extra_weight = 1.0);
  // A free of an address not allocated while tracking (allocated before the snapshot
  // started, or charged to a stack dropped at the limit) is ignored.
  void OnFree(uint64_t address, int64_t t_ms);

  // Sets what each allocation of `window` (> 0) stands for, its own and those still to
  // come; `final`: the weight will not change again (its per-stack bookkeeping is
  // dropped, and a later SetWindowWeight for it is ignored).
  void SetWindowWeight(uint32_t window, double weight, bool final = false);

  // Whether the free probes watch from t_ms on (they do until told otherwise).
  void SetFreesWatched(bool watched, int64_t t_ms);

  // Appends a point to every stack's series.
  void TakePoint(int64_t t_ms);

  const std::vector<SnapshotStack>& stacks() const { return stacks_; }
  // The stacks with their allocation cohorts: the window [start_ms, end_ms] cut into
  // kCohorts equal slices, each with its sampled allocations and how many are still live.
  std::vector<SnapshotStack> StacksWithCohorts(int64_t start_ms, int64_t end_ms) const;
  static constexpr size_t kCohorts = 8;
  uint64_t live_objects_tracked() const { return live_.size(); }

 private:
  // Weights before the window's: the Poisson weight s/p (and 1/p) times extra_weight.
  struct LiveObject {
    uint32_t stack_index;
    uint32_t window;
    double weight_bytes;
    double weight_count;
    int64_t t_ms;  // when it was allocated
    double unwatched_ms_at_birth = 0;
  };
  struct Totals {
    double live_bytes = 0;
    double live_allocs = 0;
    double allocated_bytes = 0;
    double freed_bytes = 0;
  };
  // A window whose weight may still change keeps its own unweighted totals per stack.
  struct Window {
    double weight = 1;
    bool final = false;
    absl::flat_hash_map<uint32_t, Totals> by_stack;
  };
  double WeightOf(uint32_t window) const;
  // Adds unweighted amounts of one window to a stack: weighted to its totals, as they are
  // to the window's own while its weight may change.
  void Charge(uint32_t stack_index, uint32_t window, const Totals& unweighted);
  void Publish(uint32_t stack_index);
  // Allocation times are kept per stack as counts in buckets of bucket_ms_ from
  // origin_ms_; the buckets widen (pairs merged) rather than grow past kMaxBuckets, so a
  // long window costs each stack a fixed few hundred bytes.
  size_t BucketOf(int64_t t_ms) const;
  void CountAllocation(uint32_t stack_index, int64_t t_ms);
  static constexpr size_t kMaxBuckets = 128;

  size_t max_stacks_;
  std::vector<SnapshotStack> stacks_;
  std::vector<Totals> totals_;
  std::vector<int64_t> point_times_;
  absl::flat_hash_map<std::vector<uint64_t>, uint32_t> index_;
  absl::flat_hash_map<uint64_t, LiveObject> live_;
  absl::flat_hash_map<uint32_t, Window> windows_;
  int64_t overflow_index_ = -1;
  int64_t origin_ms_ = -1;  // the first event's time
  int64_t bucket_ms_ = 250;
  std::vector<std::vector<uint32_t>> alloc_buckets_;  // per stack

  // Frees watched part of the time (see the header comment).
  struct Unseen {
    double bytes = 0;
    double allocs = 0;
  };
  // What the watches saw of one stack's objects allocated before each began, by the
  // unwatched ms they had lived through (log-spaced buckets): object-ms watched and the
  // same weighted by unwatched ms (folded in as each watch ends; the running watch's
  // objects wait in `count` and `sum_unwatched_ms`), and deaths seen.
  static constexpr size_t kAgeBuckets = 10;
  struct WatchRecord {
    std::array<double, kAgeBuckets> count{};
    std::array<double, kAgeBuckets> sum_unwatched_ms{};
    std::array<double, kAgeBuckets> exposure_ms{};
    std::array<double, kAgeBuckets> exposure_unwatched{};
    std::array<double, kAgeBuckets> deaths{};
  };
  static size_t AgeBucket(double unwatched_ms);
  double UnwatchedMsBy(int64_t t_ms) const;
  double Hazard(uint32_t stack_index) const;
  // The chance that a live object was freed unseen by t_ms.
  double DeadChance(const LiveObject& object, int64_t t_ms) const;
  // Per stack: the weighted bytes and objects of its live objects freed unseen by t_ms.
  std::vector<Unseen> UnseenDeaths(int64_t t_ms) const;
  bool frees_watched_ = true;
  bool frees_ever_unwatched_ = false;
  int64_t watch_changed_ms_ = 0;
  double unwatched_ms_ = 0;  // up to watch_changed_ms_
  // Per stack, what its watches saw since the frees were first unwatched; the hazard cached.
  std::vector<WatchRecord> watches_;
  mutable std::vector<double> hazard_;  // -1: to be solved again
};

}  // namespace drip::agent
