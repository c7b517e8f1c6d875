#include "collector/storage/retention_filter.h"

#include <algorithm>
#include <string>

#include "collector/storage/series_key.h"

namespace drip::collector {
namespace {

class RetentionFilter final : public rocksdb::CompactionFilter {
 public:
  // Chunks whose window starts at or before `last_expired_start_ms` are expired.
  RetentionFilter(int64_t last_expired_start_ms, std::atomic<uint64_t>* dropped_chunks)
      : last_expired_start_ms_(last_expired_start_ms), dropped_chunks_(dropped_chunks) {}

  Decision FilterV2(int /*level*/, const rocksdb::Slice& key, ValueType value_type,
                    const rocksdb::Slice& /*existing_value*/, std::string* /*new_value*/,
                    std::string* /*skip_until*/) const override {
    // Both folded chunks and not yet merged operands expire by their key alone, so every
    // version of a key goes in the same compaction pass.
    if (value_type != ValueType::kValue && value_type != ValueType::kMergeOperand) {
      return Decision::kKeep;
    }
    uint64_t series_id = 0;
    int64_t window_start_ms = 0;
    if (!ParseChunkKey(std::string_view(key.data(), key.size()), &series_id, &window_start_ms) ||
        window_start_ms > last_expired_start_ms_) {
      return Decision::kKeep;
    }
    // A chunk with unmerged operands reaches the filter once per operand; count it once.
    if (last_counted_key_ != std::string_view(key.data(), key.size())) {
      last_counted_key_.assign(key.data(), key.size());
      dropped_chunks_->fetch_add(1, std::memory_order_relaxed);
    }
    return Decision::kRemove;
  }

  const char* Name() const override { return "drip.RetentionFilter"; }

 private:
  const int64_t last_expired_start_ms_;
  std::atomic<uint64_t>* dropped_chunks_;
  // A filter instance serves one compaction, on one thread.
  mutable std::string last_counted_key_;
};

}  // namespace

RetentionFilterFactory::RetentionFilterFactory(const Clock* clock, int64_t retention_ms)
    : clock_(clock), retention_ms_(retention_ms) {}

void RetentionFilterFactory::NoteStoredSampleMs(int64_t ms) {
  int64_t seen = newest_sample_ms_.load(std::memory_order_relaxed);
  while (ms > seen && !newest_sample_ms_.compare_exchange_weak(seen, ms)) {
  }
}

int64_t RetentionFilterFactory::CutoffMs() const {
  const int64_t newest = newest_sample_ms_.load(std::memory_order_relaxed);
  if (newest == INT64_MIN) return INT64_MIN;
  int64_t cutoff = 0;
  if (__builtin_sub_overflow(std::min(clock_->NowMs(), newest), retention_ms_, &cutoff)) {
    return INT64_MIN;
  }
  return cutoff;
}

std::unique_ptr<rocksdb::CompactionFilter> RetentionFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context& /*context*/) {
  const int64_t window_ms = chunk_window_ms_.load();
  int64_t last_expired_start_ms = 0;
  // The window [start, start + window) is expired when start + window <= cutoff. No
  // filter (keep everything) while the window is unknown or no window can have ended.
  if (window_ms <= 0 || __builtin_sub_overflow(CutoffMs(), window_ms, &last_expired_start_ms)) {
    return nullptr;
  }
  return std::make_unique<RetentionFilter>(last_expired_start_ms, &dropped_chunks_);
}

}  // namespace drip::collector
