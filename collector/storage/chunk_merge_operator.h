// ChunkMergeOperator: how a sample reaches its chunk. AppendBatch issues one RocksDB
// Merge per sample with the encoded point as operand; this operator concatenates
// operands (and any existing chunk) in order, which is all a chunk is (chunk_codec.h).
// Appending therefore never reads the chunk on the write path, and compaction folds
// a window's operands into one value without decoding points.
//
// Concatenation is associative, so partial merges are allowed too. Stateless and
// thread-safe, as RocksDB requires.
#pragma once

#include <deque>
#include <string>

#include "rocksdb/merge_operator.h"

namespace drip::collector {

class ChunkMergeOperator final : public rocksdb::MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput& merge_in,
                   MergeOperationOutput* merge_out) const override;
  bool PartialMerge(const rocksdb::Slice& key, const rocksdb::Slice& left_operand,
                    const rocksdb::Slice& right_operand, std::string* new_value,
                    rocksdb::Logger* logger) const override;
  bool PartialMergeMulti(const rocksdb::Slice& key, const std::deque<rocksdb::Slice>& operand_list,
                         std::string* new_value, rocksdb::Logger* logger) const override;
  bool AllowSingleOperand() const override { return true; }
  // Persisted in the store's OPTIONS file: never rename.
  const char* Name() const override { return "drip.ChunkAppend"; }
};

}  // namespace drip::collector
