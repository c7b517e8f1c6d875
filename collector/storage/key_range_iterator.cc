#include "collector/storage/key_range_iterator.h"

#include <utility>

namespace drip::collector {

std::string PrefixSuccessor(std::string prefix) {
  while (!prefix.empty()) {
    const auto last = static_cast<unsigned char>(prefix.back());
    if (last != 0xff) {
      prefix.back() = static_cast<char>(last + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return prefix;
}

KeyRangeIterator::KeyRangeIterator(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                                   std::string lower, std::string upper,
                                   const rocksdb::Snapshot* snapshot)
    : lower_(std::move(lower)), upper_(std::make_unique<std::string>(std::move(upper))) {
  rocksdb::ReadOptions read;
  read.snapshot = snapshot;
  if (!upper_->empty()) {
    upper_slice_ = std::make_unique<rocksdb::Slice>(*upper_);
    read.iterate_upper_bound = upper_slice_.get();
  }
  it_.reset(db->NewIterator(read, cf));
}

KeyRangeIterator KeyRangeIterator::Prefix(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                                          std::string_view prefix,
                                          const rocksdb::Snapshot* snapshot) {
  return KeyRangeIterator(db, cf, std::string(prefix), PrefixSuccessor(std::string(prefix)),
                          snapshot);
}

}  // namespace drip::collector
