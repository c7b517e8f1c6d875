// StagingFolder: moves staged batches (staged_batch.h) into per-series chunks.
//
// A fold reads what is in the `staging` column family, groups the points by chunk
// (series, window) and writes one WriteBatch with one Merge per chunk, carrying all of
// that chunk's new points, plus a SingleDelete per staged batch it read. The write is
// atomic, so a point is always either staged or in its chunk, never both, and a reader
// using one snapshot sees it exactly once. Fold writes skip the WAL (the staged
// batches are in it already); a fold lost in a crash loses its deletes too, so the
// batches are still staged and are folded again. That relies on atomic_flush.
//
// Why: a chunk that gained N points since the last fold costs one memtable entry
// instead of N, and memtable inserts are what limits ingest (docs/storage.md).
//
// Runs on its own thread, every `interval` or as soon as `fold_bytes` were staged
// since the last fold. Thread-safe; folds never overlap.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "collector/storage/store_db.h"

namespace drip::collector {

struct StagingFolderOptions {
  std::string path;  // of the store, for messages
  // Zero: no thread; folds happen only when FoldAll() is called.
  std::chrono::milliseconds interval = std::chrono::seconds(60);
  uint64_t fold_bytes = 64 << 20;
  // Staged bytes folded per WriteBatch: bounds the fold's memory and how long its write
  // holds up the writers queued behind it.
  uint64_t max_write_bytes = 8 << 20;
};

struct FoldStats {
  uint64_t batches = 0;  // staged batches folded
  uint64_t points = 0;
  uint64_t chunk_writes = 0;  // Merges written; points / chunk_writes is the coalescing
};

class StagingFolder {
 public:
  // `db` must outlive the folder. A fold holds a lease on it (store_db.h) from start to
  // end, so a reopen waits for the fold in progress.
  StagingFolder(StoreDb* db, StagingFolderOptions options);
  // Stops the thread (see Stop).
  ~StagingFolder();

  StagingFolder(const StagingFolder&) = delete;
  StagingFolder& operator=(const StagingFolder&) = delete;

  // Starts the background thread, unless the interval is zero.
  void Start();
  // Stops the thread, cutting a running fold short after its current write. Idempotent.
  void Stop();

  // Tells the folder that `bytes` more were staged; wakes it once fold_bytes add up.
  void NoteStaged(uint64_t bytes);

  // Folds everything staged when it starts. A damaged staged batch is folded as far as
  // it can be read, logged and removed. Fails with the RocksDB error naming the store.
  // Must not be called while the thread holds a lease on the database.
  absl::StatusOr<FoldStats> FoldAll();

 private:
  void Run();

  StoreDb* const db_;
  const StagingFolderOptions options_;

  std::mutex fold_mu_;  // held for a whole fold
  std::atomic<uint64_t> staged_since_fold_{0};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;  // pairs with cv_ so that NoteStaged's wake-up is not lost
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace drip::collector
