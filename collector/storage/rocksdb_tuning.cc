#include "collector/storage/rocksdb_tuning.h"

#include <algorithm>
#include <vector>

#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"

namespace drip::collector {
namespace {

constexpr size_t kMiB = 1024 * 1024;

bool Supported(rocksdb::CompressionType type) {
  static const std::vector<rocksdb::CompressionType> supported =
      rocksdb::GetSupportedCompressions();
  return std::find(supported.begin(), supported.end(), type) != supported.end();
}

// LZ4 costs little CPU per byte written; Snappy is the fallback every build has.
rocksdb::CompressionType FastCompression() {
  if (Supported(rocksdb::kLZ4Compression)) return rocksdb::kLZ4Compression;
  if (Supported(rocksdb::kSnappyCompression)) return rocksdb::kSnappyCompression;
  return rocksdb::kNoCompression;
}

// The bottom level holds ~90% of the data and is rewritten least often: spend CPU there.
rocksdb::CompressionType DenseCompression() {
  if (Supported(rocksdb::kZSTD)) return rocksdb::kZSTD;
  return FastCompression();
}

rocksdb::BlockBasedTableOptions TableOptions(std::shared_ptr<rocksdb::Cache> block_cache) {
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = std::move(block_cache);
  table.cache_index_and_filter_blocks = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;
  table.format_version = 5;
  return table;
}

}  // namespace

rocksdb::DBOptions StoreDbOptions() {
  rocksdb::DBOptions db;
  db.create_if_missing = true;
  db.create_missing_column_families = true;
  // One flush and one compaction at a time: with 2 cores, more background work would
  // take the CPU that ingest needs without finishing sooner.
  db.max_background_jobs = 2;
  // Several gRPC writer threads share one WAL write and fsync (group commit) and then
  // insert their batches into the memtables in parallel.
  db.allow_concurrent_memtable_write = true;
  db.enable_write_thread_adaptive_yield = true;
  // Bound on all memtables together (the series CF takes nearly all of it).
  db.db_write_buffer_size = 512 * kMiB;
  // Bounds what a restart replays (and refolds) after a crash: past this much WAL the
  // memtables are flushed so that old WAL files can go.
  db.max_total_wal_size = 512 * kMiB;
  // Smooth writeback instead of multi-second stalls when a big SST is synced.
  db.bytes_per_sync = 1 * kMiB;
  db.wal_bytes_per_sync = 1 * kMiB;
  // Folds write chunks without the WAL (staging_folder.cc). Flushing every column
  // family together is what keeps that crash-safe: staged batches and the deletes
  // that fold them reach disk only together with the chunk merges. (Rules out
  // enable_pipelined_write, which RocksDB does not combine with it.)
  db.atomic_flush = true;
  return db;
}

std::shared_ptr<rocksdb::Cache> StoreBlockCache() { return rocksdb::NewLRUCache(128 * kMiB); }

rocksdb::ColumnFamilyOptions SeriesColumnFamilyOptions(
    std::shared_ptr<rocksdb::MergeOperator> merge_operator,
    std::shared_ptr<rocksdb::CompactionFilterFactory> retention,
    std::shared_ptr<rocksdb::Cache> block_cache) {
  rocksdb::ColumnFamilyOptions cf;
  cf.merge_operator = std::move(merge_operator);
  cf.compaction_filter_factory = std::move(retention);
  // Each fold adds one merge operand per chunk it touched: large memtables mean fewer
  // flushes and L0 files, and a chunk's operands mostly meet in the first compaction.
  cf.write_buffer_size = 128 * kMiB;
  cf.max_write_buffer_number = 4;
  cf.min_write_buffer_number_to_merge = 1;
  cf.level0_file_num_compaction_trigger = 4;
  cf.level0_slowdown_writes_trigger = 20;
  cf.level0_stop_writes_trigger = 36;
  cf.target_file_size_base = 64 * kMiB;
  cf.max_bytes_for_level_base = 512 * kMiB;
  cf.level_compaction_dynamic_level_bytes = true;
  // Fresh data in L0/L1 is rewritten soon; compress it cheaply, and densely at the bottom.
  cf.compression = FastCompression();
  cf.compression_per_level = {rocksdb::kNoCompression, FastCompression(), FastCompression(),
                              FastCompression(),       FastCompression(), FastCompression(),
                              FastCompression()};
  cf.bottommost_compression = DenseCompression();
  // A file untouched for a day is recompacted, so expired chunks never linger in a
  // quiet part of the key space for longer than that.
  cf.periodic_compaction_seconds = 24 * 60 * 60;

  rocksdb::BlockBasedTableOptions table = TableOptions(std::move(block_cache));
  // A chunk is a few KiB and reads scan whole series: bigger blocks compress better.
  table.block_size = 16 * 1024;
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return cf;
}

rocksdb::ColumnFamilyOptions MetaColumnFamilyOptions(std::shared_ptr<rocksdb::Cache> block_cache) {
  rocksdb::ColumnFamilyOptions cf;
  cf.write_buffer_size = 32 * kMiB;
  cf.compression = FastCompression();
  cf.level_compaction_dynamic_level_bytes = true;
  rocksdb::BlockBasedTableOptions table = TableOptions(std::move(block_cache));
  // A new series is looked up once before it gets an id; the bloom filter answers
  // "no such series" without reading a data block.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.whole_key_filtering = true;
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return cf;
}

rocksdb::ColumnFamilyOptions StagingColumnFamilyOptions() {
  rocksdb::ColumnFamilyOptions cf;
  // Larger than a fold's worth (64 MiB by default), so that a staged batch and the
  // SingleDelete that folds it usually meet in the memtable and both vanish at flush,
  // and staged bytes are written to disk once, in the WAL.
  cf.write_buffer_size = 128 * kMiB;
  cf.max_write_buffer_number = 3;
  // Whatever reaches an SST is deleted soon after: not worth compressing.
  cf.compression = rocksdb::kNoCompression;
  cf.level_compaction_dynamic_level_bytes = true;
  return cf;
}

rocksdb::ColumnFamilyOptions ReportsColumnFamilyOptions(
    std::shared_ptr<rocksdb::Cache> block_cache) {
  rocksdb::ColumnFamilyOptions cf;
  cf.write_buffer_size = 16 * kMiB;
  cf.compression = FastCompression();
  cf.level_compaction_dynamic_level_bytes = true;
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(TableOptions(std::move(block_cache))));
  return cf;
}

}  // namespace drip::collector
