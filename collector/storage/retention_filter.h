// RetentionFilterFactory: retention for the `series` column family, applied while
// RocksDB compacts. A chunk is dropped once its whole window ends at or before
// now - retention, so deleting old data costs no extra writes (no tombstones): the
// compactions that happen anyway, and the ones EnforceRetention asks for, leave expired
// chunks out. Readers hide expired samples themselves until then (ReadSeries).
//
// Until set_chunk_window_ms() is called the filter keeps everything: the window is a
// property of the store on disk, known only once the store is open.
//
// "Now" is the collector's clock, but never later than the newest sample the store holds:
// a clock that jumps a year ahead must not make the next compaction delete the whole
// store, and a fleet that sent nothing for a while loses nothing for it either (old data
// goes once newer data has arrived to take its place on disk).
//
// Thread-safe: RocksDB creates filters from several compaction threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "common/base/clock.h"
#include "rocksdb/compaction_filter.h"

namespace drip::collector {

class RetentionFilterFactory final : public rocksdb::CompactionFilterFactory {
 public:
  // `clock` must outlive the factory.
  RetentionFilterFactory(const Clock* clock, int64_t retention_ms);

  void set_chunk_window_ms(int64_t chunk_window_ms) { chunk_window_ms_.store(chunk_window_ms); }

  // The store holds a sample stamped `ms` (called at open with the newest per host, and
  // for every stored batch): retention's "now" may advance to it.
  void NoteStoredSampleMs(int64_t ms);

  // The time before which samples are expired: min(now, newest stored sample) - retention.
  // INT64_MIN (nothing expired) while the store holds no sample.
  int64_t CutoffMs() const;

  // Chunks dropped by compactions since the previous call.
  uint64_t TakeDroppedChunks() { return dropped_chunks_.exchange(0); }

  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  // Persisted in the store's OPTIONS file: never rename.
  const char* Name() const override { return "drip.RetentionFilterFactory"; }

 private:
  const Clock* clock_;
  const int64_t retention_ms_;
  std::atomic<int64_t> chunk_window_ms_{0};  // 0: unknown, keep everything
  std::atomic<int64_t> newest_sample_ms_{INT64_MIN};
  std::atomic<uint64_t> dropped_chunks_{0};
};

}  // namespace drip::collector
