#include "agent/batch_buffer.h"

#include <algorithm>
#include <utility>

#include "common/base/duration.h"
#include "common/daemon/logging.h"

namespace drip::agent {

BatchBuffer::BatchBuffer(BatchBufferOptions options) : options_(options) {}

BatchBuffer::DropStamp BatchBuffer::DropStamp::Of(const drip::v1::SampleBatch& batch) {
  DropStamp stamp;
  stamp.first_sequence = batch.first_dropped_sequence();
  stamp.from_ms = batch.dropped_from_ms();
  stamp.until_ms = batch.dropped_until_ms();
  stamp.samples = batch.dropped_samples();
  return stamp;
}

void BatchBuffer::DropStamp::Merge(const DropStamp& earlier) {
  if (earlier.first_sequence == 0) return;
  if (first_sequence == 0 || earlier.first_sequence < first_sequence) {
    first_sequence = earlier.first_sequence;
  }
  if (earlier.samples > 0) {
    from_ms = samples > 0 ? std::min(from_ms, earlier.from_ms) : earlier.from_ms;
    until_ms = samples > 0 ? std::max(until_ms, earlier.until_ms) : earlier.until_ms;
  }
  samples += earlier.samples;
}

void BatchBuffer::DropStamp::StampOn(drip::v1::SampleBatch* batch) const {
  batch->set_first_dropped_sequence(first_sequence);
  batch->set_dropped_from_ms(from_ms);
  batch->set_dropped_until_ms(until_ms);
  batch->set_dropped_samples(samples);
}

uint64_t BatchBuffer::Push(drip::v1::SampleBatch batch) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t sequence = next_sequence_++;
  batch.set_sequence(sequence);
  pending_drop_.StampOn(&batch);
  pending_drop_ = DropStamp();
  Entry& entry = entries_.emplace_back();
  // What the batch holds in memory, which is what the bound protects (the agent's own
  // memory), not its smaller size on the wire.
  entry.bytes = batch.SpaceUsedLong();
  entry.batch = std::move(batch);
  bytes_ += entry.bytes;
  while (entries_.size() > 1 &&
         (entries_.size() > options_.max_batches || bytes_ > options_.max_bytes)) {
    DropOldestLocked();
  }
  if (listener_) listener_();
  return sequence;
}

void BatchBuffer::DropOldestLocked() {
  Entry& oldest = entries_.front();
  // The dropped batch itself, widened by the earlier drops whose stamp it carried.
  DropStamp dropped;
  dropped.first_sequence = oldest.batch.sequence();
  for (const drip::v1::Sample& s : oldest.batch.samples()) {
    const int64_t ts = s.timestamp_ms();
    dropped.from_ms = dropped.samples == 0 ? ts : std::min(dropped.from_ms, ts);
    dropped.until_ms = dropped.samples == 0 ? ts : std::max(dropped.until_ms, ts);
    ++dropped.samples;
  }
  dropped.Merge(DropStamp::Of(oldest.batch));
  const uint64_t first_dropped = dropped.first_sequence;
  const uint64_t samples = static_cast<uint64_t>(oldest.batch.samples_size());
  // What the buffer held when the bound was hit, for the log line below.
  const size_t held_batches = entries_.size();
  const uint64_t held_bytes = bytes_;
  bytes_ -= oldest.bytes;
  entries_.pop_front();  // `oldest` dangles from here on
  ++totals_.dropped_batches;
  totals_.dropped_samples += samples;

  if (!dropping_) {
    dropping_ = true;
    episode_batches_ = 0;
    episode_samples_ = 0;
    episode_first_sequence_ = first_dropped;
    Logger("agent")->warn(
        "batch buffer full ({} batches, {}; bounds {} batches, {}): dropping the oldest "
        "unacknowledged batches from sequence {} on until the collector catches up; the "
        "collector records the gap",
        held_batches, FormatBytes(held_bytes), options_.max_batches,
        FormatBytes(options_.max_bytes), first_dropped);
  }
  ++episode_batches_;
  episode_samples_ += samples;

  if (!entries_.empty()) {
    drip::v1::SampleBatch& next = entries_.front().batch;
    DropStamp stamp = DropStamp::Of(next);
    stamp.Merge(dropped);
    stamp.StampOn(&next);
  } else {
    pending_drop_.Merge(dropped);
  }
}

void BatchBuffer::Ack(uint64_t sequence) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t removed = 0;
  while (!entries_.empty() && entries_.front().batch.sequence() <= sequence) {
    bytes_ -= entries_.front().bytes;
    entries_.pop_front();
    ++removed;
  }
  if (removed > 0 && dropping_) {
    dropping_ = false;
    Logger("agent")->info(
        "batch buffer has room again; {} batches ({} samples) from sequence {} on were dropped "
        "while the collector was away or slow",
        episode_batches_, episode_samples_, episode_first_sequence_);
  }
}

bool BatchBuffer::Reject(uint64_t sequence) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.batch.sequence() == sequence; });
  if (it == entries_.end()) return false;
  const DropStamp stamp = DropStamp::Of(it->batch);
  ++totals_.rejected_batches;
  totals_.rejected_samples += static_cast<uint64_t>(it->batch.samples_size());
  bytes_ -= it->bytes;
  it = entries_.erase(it);
  // The refused batch may have been the one telling the collector about earlier drops.
  if (stamp.first_sequence != 0) {
    if (it != entries_.end()) {
      DropStamp next = DropStamp::Of(it->batch);
      next.Merge(stamp);
      next.StampOn(&it->batch);
    } else {
      pending_drop_.Merge(stamp);
    }
  }
  return true;
}

void BatchBuffer::SetNextSequenceAtLeast(uint64_t next) {
  std::lock_guard<std::mutex> lock(mu_);
  // Sent batches form a prefix (they go out in order); only the unsent rest may move.
  auto first_unsent =
      std::find_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.sent; });
  // The lowest number the unsent part uses, drop stamps included, so that a renumbered
  // drop gap stays a gap.
  uint64_t base = next_sequence_;
  if (first_unsent != entries_.end()) {
    base = first_unsent->batch.sequence();
    if (first_unsent->batch.first_dropped_sequence() != 0) {
      base = std::min(base, first_unsent->batch.first_dropped_sequence());
    }
  } else if (pending_drop_.first_sequence != 0) {
    base = pending_drop_.first_sequence;
  }
  if (base >= next) return;
  const uint64_t offset = next - base;
  size_t renumbered = 0;
  for (auto it = first_unsent; it != entries_.end(); ++it) {
    drip::v1::SampleBatch& b = it->batch;
    b.set_sequence(b.sequence() + offset);
    if (b.first_dropped_sequence() != 0)
      b.set_first_dropped_sequence(b.first_dropped_sequence() + offset);
    ++renumbered;
  }
  if (pending_drop_.first_sequence != 0) pending_drop_.first_sequence += offset;
  next_sequence_ += offset;
  if (renumbered > 0) {
    Logger("agent")->info(
        "collector already holds sequences up to {} for this host (an earlier agent run); "
        "renumbered {} unsent batches to continue from there",
        next - 1, renumbered);
  }
}

std::optional<drip::v1::SampleBatch> BatchBuffer::NextAfter(uint64_t after) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it =
      std::upper_bound(entries_.begin(), entries_.end(), after,
                       [](uint64_t value, const Entry& e) { return value < e.batch.sequence(); });
  if (it == entries_.end()) return std::nullopt;
  it->sent = true;
  return it->batch;
}

void BatchBuffer::SetPushListener(std::function<void()> listener) {
  std::lock_guard<std::mutex> lock(mu_);
  listener_ = std::move(listener);
}

BatchBuffer::Stats BatchBuffer::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = totals_;
  s.buffered_batches = entries_.size();
  s.buffered_bytes = bytes_;
  s.next_sequence = next_sequence_;
  return s;
}

}  // namespace drip::agent
