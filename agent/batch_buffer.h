// BatchBuffer: the agent's bounded FIFO of SampleBatch messages the collector has not
// acknowledged yet. It is what makes a collector outage (or restart) lose nothing up to
// the bound: batches stay here until an Ack covers them and are resent, in order, after
// every reconnect.
//
// Sequences. Every pushed batch gets the next per-host sequence number, strictly
// increasing. The collector takes a batch at or below its stored high-water mark for a
// resend, so the numbering must continue above that mark across agent restarts:
// SetNextSequenceAtLeast(Welcome.acked_sequence + 1) renumbers the batches that were
// never sent (sampled before this process first heard from the collector) to start at
// the mark, keeping their order and any drop gap between them.
//
// Bounds. When a push exceeds max_batches or max_bytes (serialized size), the OLDEST
// batches are dropped — recent data is worth more to a leak detector than old data it
// will get again — counted, and logged once per drop episode (its start, and its end
// when an Ack frees room). The batch that becomes the oldest after a drop carries
// first_dropped_sequence, so the collector records the gap even when it has no mark
// for this host yet, together with the time span and count of the dropped samples
// (dropped_from_ms, dropped_until_ms, dropped_samples), so that the gap is marked in
// time. The newest batch is never dropped by its own push.
//
// Thread-safety: every method may be called from any thread (the sampler thread
// pushes, the stream threads read, ack and reject).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>

#include "drip/v1/agent.pb.h"

namespace drip::agent {

struct BatchBufferOptions {
  uint64_t max_batches = 1000;
  uint64_t max_bytes = 64ull * 1024 * 1024;
};

class BatchBuffer {
 public:
  struct Stats {
    uint64_t buffered_batches = 0;
    uint64_t buffered_bytes = 0;
    uint64_t dropped_batches = 0;  // dropped for the bound, since start
    uint64_t dropped_samples = 0;
    uint64_t rejected_batches = 0;  // refused by the collector and dropped, since start
    uint64_t rejected_samples = 0;
    uint64_t next_sequence = 1;  // what the next Push assigns
  };

  explicit BatchBuffer(BatchBufferOptions options);

  // Appends `batch` (its sequence and first_dropped_sequence are overwritten) and
  // returns the sequence it was given. Drops the oldest batches if over a bound.
  uint64_t Push(drip::v1::SampleBatch batch);

  // The collector holds every batch <= `sequence`: drops them. Ends a drop episode when
  // it frees room.
  void Ack(uint64_t sequence);

  // The collector refused batch `sequence` for good: drops it so it is not resent.
  // Returns false when no such batch is buffered.
  bool Reject(uint64_t sequence);

  // Makes sure the next sequence is at least `next`; batches never handed out by
  // NextAfter() and numbered below `next` are renumbered upwards by one offset (see
  // the header comment). Call with Welcome.acked_sequence + 1 before acking it.
  void SetNextSequenceAtLeast(uint64_t next);

  // A copy of the oldest batch with a sequence above `after`, marked as sent (sent
  // batches are never renumbered: the collector may hold them). nullopt when none.
  std::optional<drip::v1::SampleBatch> NextAfter(uint64_t after);

  // Called after every Push, with the buffer's lock held: must be quick and must not
  // call back into the buffer. Replaces any previous listener; pass nullptr to clear.
  void SetPushListener(std::function<void()> listener);

  Stats stats() const;

 private:
  struct Entry {
    drip::v1::SampleBatch batch;
    uint64_t bytes = 0;
    bool sent = false;
  };

  // What a drop stamp says: the first dropped sequence and the dropped samples' span.
  struct DropStamp {
    uint64_t first_sequence = 0;  // 0: no drop to report
    int64_t from_ms = 0;
    int64_t until_ms = 0;
    uint64_t samples = 0;

    static DropStamp Of(const drip::v1::SampleBatch& batch);
    // Widens this stamp by `earlier` (drops that came before it).
    void Merge(const DropStamp& earlier);
    void StampOn(drip::v1::SampleBatch* batch) const;
  };

  // Drops the oldest entry, moving its drop stamp onto the next oldest.
  void DropOldestLocked();

  const BatchBufferOptions options_;
  mutable std::mutex mu_;
  std::deque<Entry> entries_;  // sequence order, oldest first
  uint64_t bytes_ = 0;
  uint64_t next_sequence_ = 1;
  // A drop not yet stamped on a batch (the buffer was emptied by drops).
  DropStamp pending_drop_;
  Stats totals_;
  // The current drop episode, for its start and end log lines.
  bool dropping_ = false;
  uint64_t episode_batches_ = 0;
  uint64_t episode_samples_ = 0;
  uint64_t episode_first_sequence_ = 0;
  std::function<void()> listener_;
};

}  // namespace drip::agent
