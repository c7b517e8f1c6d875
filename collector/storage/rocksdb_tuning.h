// RocksDB options for the series store, chosen for sustained ingest on a small box
// (the reference collector has 2 cores): big memtables, few background jobs, atomic
// flushes (which the unlogged folds rely on), cheap compression near the top of the
// tree and strong compression at the bottom where most bytes live. The reasons for
// each number are in rocksdb_tuning.cc; docs/storage.md summarises them.
#pragma once

#include <memory>

#include "rocksdb/cache.h"
#include "rocksdb/compaction_filter.h"
#include "rocksdb/merge_operator.h"
#include "rocksdb/options.h"

namespace drip::collector {

// Column family names; persisted on disk, never rename.
inline constexpr char kSeriesColumnFamily[] = "series";
inline constexpr char kMetaColumnFamily[] = "meta";
inline constexpr char kReportsColumnFamily[] = "reports";
inline constexpr char kStagingColumnFamily[] = "staging";

rocksdb::DBOptions StoreDbOptions();

// Shared by every column family so that the memory bound is one number.
std::shared_ptr<rocksdb::Cache> StoreBlockCache();

rocksdb::ColumnFamilyOptions SeriesColumnFamilyOptions(
    std::shared_ptr<rocksdb::MergeOperator> merge_operator,
    std::shared_ptr<rocksdb::CompactionFilterFactory> retention,
    std::shared_ptr<rocksdb::Cache> block_cache);
rocksdb::ColumnFamilyOptions MetaColumnFamilyOptions(std::shared_ptr<rocksdb::Cache> block_cache);
rocksdb::ColumnFamilyOptions StagingColumnFamilyOptions();
rocksdb::ColumnFamilyOptions ReportsColumnFamilyOptions(
    std::shared_ptr<rocksdb::Cache> block_cache);

}  // namespace drip::collector
