#include "collector/storage/staging_folder.h"

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collector/storage/series_key.h"
#include "collector/storage/staged_batch.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"

namespace drip::collector {
namespace {

struct ChunkId {
  uint64_t series_id;
  int64_t window_start_ms;

  bool operator==(const ChunkId&) const = default;
  bool operator<(const ChunkId& o) const {
    return series_id != o.series_id ? series_id < o.series_id : window_start_ms < o.window_start_ms;
  }
};

struct ChunkIdHash {
  size_t operator()(const ChunkId& c) const {
    // Series ids are dense and windows multiples of the window: mix both.
    uint64_t h = c.series_id * 0x9e3779b97f4a7c15ull;
    h ^= static_cast<uint64_t>(c.window_start_ms) + 0x7f4a7c159e3779b9ull + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};

// Points gathered for one WriteBatch, and the staged batches they came from.
struct PendingFold {
  std::unordered_map<ChunkId, std::string, ChunkIdHash> chunks;
  std::vector<std::string> staged_keys;
  uint64_t staged_bytes = 0;
};

// Writes `pending` as one atomic batch (see the header) and empties it.
absl::Status WriteFold(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* series,
                       rocksdb::ColumnFamilyHandle* staging, const std::string& path,
                       PendingFold* pending, FoldStats* stats) {
  if (pending->staged_keys.empty()) return absl::OkStatus();
  // In key order: neighbouring memtable inserts are cheaper.
  std::vector<std::pair<ChunkId, const std::string*>> chunks;
  chunks.reserve(pending->chunks.size());
  size_t bytes = 0;
  for (const auto& [id, points] : pending->chunks) {
    chunks.emplace_back(id, &points);
    bytes += points.size() + kChunkKeySize + 8;
  }
  std::sort(chunks.begin(), chunks.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  rocksdb::WriteBatch batch(bytes + pending->staged_keys.size() * 48);
  rocksdb::Status s;
  std::string key;
  for (const auto& [id, points] : chunks) {
    key.clear();
    AppendChunkKey(id.series_id, id.window_start_ms, &key);
    if (s = batch.Merge(series, key, *points); !s.ok()) break;
  }
  for (const std::string& staged_key : pending->staged_keys) {
    if (!s.ok()) break;
    s = batch.SingleDelete(staging, staged_key);
  }
  if (!s.ok()) {
    return absl::InternalError(fmt::format("store at {}: building a fold: {}", path, s.ToString()));
  }
  // Not logged: the staged batches are already in the WAL, and logging them again as
  // chunks would double what is written and synced per sample. A fold lost in a crash
  // loses its SingleDeletes with it, so its batches are still staged and are folded
  // again. This is safe only because every column family is flushed at once
  // (atomic_flush, rocksdb_tuning.cc): no flush can persist the deletes here without
  // the merges they pair with.
  rocksdb::WriteOptions options;
  options.disableWAL = true;
  s = db->Write(options, &batch);
  if (!s.ok()) {
    return absl::UnavailableError(
        fmt::format("store at {}: writing folded chunks: {}", path, s.ToString()));
  }
  stats->batches += pending->staged_keys.size();
  stats->chunk_writes += chunks.size();
  *pending = PendingFold();
  return absl::OkStatus();
}

}  // namespace

StagingFolder::StagingFolder(StoreDb* db, StagingFolderOptions options)
    : db_(db), options_(std::move(options)) {}

StagingFolder::~StagingFolder() { Stop(); }

void StagingFolder::Start() {
  if (options_.interval.count() <= 0 || thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void StagingFolder::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StagingFolder::NoteStaged(uint64_t bytes) {
  const uint64_t before = staged_since_fold_.fetch_add(bytes);
  if (before < options_.fold_bytes && before + bytes >= options_.fold_bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  }
}

void StagingFolder::Run() {
  auto log = Logger("collector");
  bool failing = false;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, options_.interval,
                 [this] { return stopping_ || staged_since_fold_.load() >= options_.fold_bytes; });
    if (stopping_) break;
    lock.unlock();
    absl::StatusOr<FoldStats> stats = FoldAll();
    // Once per streak: a failing disk must not log once per interval.
    if (!stats.ok() && !failing) {
      log->error("folding staged samples into chunks failed (retrying, reads still see them): {}",
                 std::string(stats.status().message()));
    } else if (stats.ok() && failing) {
      log->info("store at {}: folding staged samples works again", options_.path);
    } else if (stats.ok() && stats->batches > 0) {
      log->debug("store at {}: folded {} batches, {} points into {} chunk writes", options_.path,
                 stats->batches, stats->points, stats->chunk_writes);
    }
    failing = !stats.ok();
    lock.lock();
  }
}

absl::StatusOr<FoldStats> StagingFolder::FoldAll() {
  std::lock_guard<std::mutex> fold_lock(fold_mu_);
  // Reset first: whatever is staged from now on may be missed by this fold's iterator,
  // and counts towards the next one.
  staged_since_fold_ = 0;
  FoldStats stats;
  PendingFold pending;
  StoreDb::Lease lease(db_);
  if (!lease.open()) return lease.ClosedError();

  rocksdb::ReadOptions read;
  // Staged batches are read once and deleted: keep them out of the block cache.
  read.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(lease->db->NewIterator(read, lease->staging));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const rocksdb::Slice value = it->value();
    StagedBatchReader reader(std::string_view(value.data(), value.size()));
    StagedPoint point;
    while (reader.Next(&point)) {
      pending.chunks[ChunkId{point.series_id, point.window_start_ms}].append(point.point);
      ++stats.points;
    }
    if (!reader.status().ok()) {
      // Keep what was readable; leaving the batch staged would only fail every fold.
      Logger("collector")
          ->error("store at {}: dropping the unreadable rest of a staged batch: {}", options_.path,
                  std::string(reader.status().message()));
    }
    pending.staged_keys.emplace_back(it->key().data(), it->key().size());
    pending.staged_bytes += value.size();
    if (pending.staged_bytes >= options_.max_write_bytes) {
      absl::Status written =
          WriteFold(lease->db, lease->series, lease->staging, options_.path, &pending, &stats);
      if (!written.ok()) return written;
      if (stopping_) return stats;
    }
  }
  if (!it->status().ok()) {
    return absl::UnavailableError(fmt::format("store at {}: reading staged batches: {}",
                                              options_.path, it->status().ToString()));
  }
  absl::Status written =
      WriteFold(lease->db, lease->series, lease->staging, options_.path, &pending, &stats);
  if (!written.ok()) return written;
  return stats;
}

}  // namespace drip::collector
