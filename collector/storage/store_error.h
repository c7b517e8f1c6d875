// StoreError: a RocksDB failure as an absl::Status that names the store and what was
// being done, with a code callers act on: Unavailable is worth retrying (I/O, disk full,
// lock held), DataLoss is not. Shared by the series and report stores.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "rocksdb/slice.h"
#include "rocksdb/status.h"

namespace drip::collector {

absl::Status StoreError(const std::string& path, std::string_view what, const rocksdb::Status& s);

inline rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }
inline std::string_view ToView(const rocksdb::Slice& s) {
  return std::string_view(s.data(), s.size());
}

}  // namespace drip::collector
