#include "collector/storage/chunk_merge_operator.h"

namespace drip::collector {

bool ChunkMergeOperator::FullMergeV2(const MergeOperationInput& merge_in,
                                     MergeOperationOutput* merge_out) const {
  // One reservation and one pass: RocksDB's AssociativeMergeOperator would merge pairwise
  // and copy the growing chunk once per operand.
  size_t size = merge_in.existing_value != nullptr ? merge_in.existing_value->size() : 0;
  for (const rocksdb::Slice& operand : merge_in.operand_list) size += operand.size();
  std::string& out = merge_out->new_value;
  out.clear();
  out.reserve(size);
  if (merge_in.existing_value != nullptr) {
    out.append(merge_in.existing_value->data(), merge_in.existing_value->size());
  }
  for (const rocksdb::Slice& operand : merge_in.operand_list) {
    out.append(operand.data(), operand.size());
  }
  return true;
}

bool ChunkMergeOperator::PartialMerge(const rocksdb::Slice& /*key*/,
                                      const rocksdb::Slice& left_operand,
                                      const rocksdb::Slice& right_operand, std::string* new_value,
                                      rocksdb::Logger* /*logger*/) const {
  new_value->clear();
  new_value->reserve(left_operand.size() + right_operand.size());
  new_value->append(left_operand.data(), left_operand.size());
  new_value->append(right_operand.data(), right_operand.size());
  return true;
}

bool ChunkMergeOperator::PartialMergeMulti(const rocksdb::Slice& /*key*/,
                                           const std::deque<rocksdb::Slice>& operand_list,
                                           std::string* new_value,
                                           rocksdb::Logger* /*logger*/) const {
  size_t size = 0;
  for (const rocksdb::Slice& operand : operand_list) size += operand.size();
  new_value->clear();
  new_value->reserve(size);
  for (const rocksdb::Slice& operand : operand_list) {
    new_value->append(operand.data(), operand.size());
  }
  return true;
}

}  // namespace drip::collector
