// A staged batch: how an agent batch is first written, as one value in the `staging`
// column family, before the folder (staging_folder.h) moves its points into per-series
// chunks. One RocksDB entry per batch instead of one per sample is what makes ingest
// cheap; docs/storage.md has the numbers.
//
//   staged batch := format byte (1)  record*
//   record       := varint(series_id)  varint(zigzag(window delta))  point
// where the window delta is window_start_ms minus the previous record's (0 before the
// first), one byte for the usual batch whose samples share a window, and point is
// exactly a chunk point (chunk_codec.h), so folding copies bytes, never re-encodes.
// Staged batches are what the WAL carries: every byte saved here is one less to fsync.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "drip/v1/sample.pb.h"

namespace drip::collector {

// Builds a staged batch in a caller's string.
class StagedBatchWriter {
 public:
  // Clears *staged and writes the format byte; `staged` must outlive the writer.
  explicit StagedBatchWriter(std::string* staged);

  // Appends `sample` (whose window starts at window_start_ms) as a point of series_id.
  void Append(uint64_t series_id, int64_t window_start_ms, const drip::v1::Sample& sample);

 private:
  std::string* staged_;
  int64_t previous_window_ms_ = 0;
};

struct StagedPoint {
  uint64_t series_id = 0;
  int64_t window_start_ms = 0;
  std::string_view point;  // points into the staged batch
};

// Walks the records of a staged batch. Bounds-checked: the value comes from disk.
class StagedBatchReader {
 public:
  // `staged` must outlive the reader.
  explicit StagedBatchReader(std::string_view staged);

  // Reads the next record into *point; false at the end, or at damage, after which
  // status() is DATA_LOSS naming the record and offset.
  bool Next(StagedPoint* point);

  const absl::Status& status() const { return status_; }

 private:
  bool Fail(std::string_view what);

  const std::string_view staged_;
  std::string_view in_;
  size_t index_ = 0;
  int64_t previous_window_ms_ = 0;
  absl::Status status_;
};

}  // namespace drip::collector
