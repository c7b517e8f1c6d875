// KeyRangeIterator: a RocksDB iterator over one key range of one column family — the keys
// under a prefix (a host's series index, its gaps, its staged batches) or between two
// keys (a series' chunks in a time range) — which owns the upper bound that RocksDB's
// ReadOptions only point at, so every scan of the store is written the same way:
//
//   KeyRangeIterator it = KeyRangeIterator::Prefix(db, cf, prefix);
//   for (it.SeekToStart(); it->Valid(); it->Next()) { ... }
//   if (!it->status().ok()) ...
//
// Not thread-safe, as RocksDB iterators are not; it must not outlive `db`.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "rocksdb/db.h"

namespace drip::collector {

// The smallest key greater than every key that starts with `prefix`; empty (no bound)
// for a prefix of 0xff bytes only.
std::string PrefixSuccessor(std::string prefix);

class KeyRangeIterator {
 public:
  // Keys in [lower, upper), read at `snapshot` when it is given.
  KeyRangeIterator(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, std::string lower,
                   std::string upper, const rocksdb::Snapshot* snapshot = nullptr);
  // Keys that start with `prefix`.
  static KeyRangeIterator Prefix(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                                 std::string_view prefix,
                                 const rocksdb::Snapshot* snapshot = nullptr);

  KeyRangeIterator(KeyRangeIterator&&) noexcept = default;
  KeyRangeIterator& operator=(KeyRangeIterator&&) noexcept = default;

  // Positions at the first key of the range.
  void SeekToStart() { it_->Seek(lower_); }
  rocksdb::Iterator* operator->() const { return it_.get(); }

 private:
  std::string lower_;
  // Heap-allocated so that the iterator's pointer to it survives a move.
  std::unique_ptr<std::string> upper_;
  std::unique_ptr<rocksdb::Slice> upper_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

}  // namespace drip::collector
