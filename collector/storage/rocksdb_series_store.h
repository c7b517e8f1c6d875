// RocksDbSeriesStore: SeriesStore on an embedded RocksDB (no server to run).
// Layout and the reasons for it are in docs/storage.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collector/storage/series_store.h"
#include "common/clock.h"

namespace drip::collector {

struct RocksDbSeriesStoreOptions {
  std::string path;  // directory; created when missing
  std::chrono::milliseconds retention = std::chrono::hours(24 * 14);
  // Samples of one series are grouped into one chunk per window of this length.
  std::chrono::milliseconds chunk_window = std::chrono::hours(1);
  // fsync the WAL before acknowledging: survives power loss, not only process crash.
  bool sync_writes = true;
  const Clock* clock = SystemClock::Get();
};

class RocksDbSeriesStore;  // defined in rocksdb_series_store.cc

// Opens (creating if needed) the store at options.path. Fails with a message naming the
// path when the directory cannot be used (permissions, another collector holds the lock,
// corruption).
absl::StatusOr<std::unique_ptr<SeriesStore>> OpenRocksDbSeriesStore(
    const RocksDbSeriesStoreOptions& options);

}  // namespace drip::collector
