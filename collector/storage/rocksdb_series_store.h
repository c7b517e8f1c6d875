// RocksDbSeriesStore: SeriesStore on an embedded RocksDB (no server to run).
// Layout and the reasons for it are in docs/storage.md.
//
// Column families: `series` holds sample chunks (one per series per window, key
// be64(series_id) be64(window_start)), appended to by merges; `meta` holds the series
// index, host records with their high-water marks, gaps and counters; `staging` holds
// whole batches until they are folded into chunks; `reports` holds leak
// reports and the audit log (RocksDbReportStore). Every AppendBatch is one atomic WriteBatch: the
// staged batch, new index entries and the host's new mark together.
//
// After a write error (a full disk) RocksDB takes no more writes; Recover() brings the
// store back by reopening the database underneath its users (store_db.h), once the disk
// has room again. Reads go on meanwhile.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "collector/storage/host_state.h"
#include "collector/storage/meta_record.h"
#include "collector/storage/rocksdb_report_store.h"
#include "collector/storage/series_store.h"
#include "collector/storage/staging_folder.h"
#include "collector/storage/store_db.h"
#include "collector/storage/store_error_listener.h"
#include "common/base/clock.h"

namespace rocksdb {
class Env;
class WriteBatch;
}  // namespace rocksdb

namespace drip::collector {

struct RocksDbSeriesStoreOptions {
  std::string path;  // directory; created when missing
  std::chrono::milliseconds retention = std::chrono::hours(24 * 14);
  // Samples of one series are grouped into one chunk per window of this length. Fixed
  // when the store is created: a store reopened with a different value keeps its own
  // (and logs a warning), since the window is part of the on-disk layout.
  std::chrono::milliseconds chunk_window = std::chrono::hours(1);
  // fsync the WAL before acknowledging: survives power loss, not only process crash.
  bool sync_writes = true;
  // A batch is written whole to a staging area and folded into per-series chunks in
  // the background: every fold_interval, or sooner once fold_bytes were staged. Longer
  // intervals put more points into each chunk write (cheaper); reads see staged
  // samples either way. Zero: no background folding (FoldStaged() only).
  std::chrono::milliseconds fold_interval = std::chrono::seconds(60);
  uint64_t fold_bytes = 64 << 20;
  // After writes failed for lack of space, Recover() reopens the store only once the
  // filesystem has this much free: reopening as soon as a few bytes are free would take
  // writes for a moment and fail again. The default is RocksDB's own rule for resuming
  // after a full disk (one memtable's worth).
  uint64_t recovery_free_bytes = 128 << 20;
  const Clock* clock = SystemClock::Get();
  // Test hooks: the RocksDB environment (fault injection), and how free space on the
  // store's filesystem is measured (default: statvfs, space available to the process).
  rocksdb::Env* env = nullptr;
  std::function<absl::StatusOr<uint64_t>(const std::string& path)> free_space;
};

class RetentionFilterFactory;

class RocksDbSeriesStore final : public SeriesStore {
 public:
  // See OpenRocksDbSeriesStore.
  static absl::StatusOr<std::unique_ptr<RocksDbSeriesStore>> Open(
      const RocksDbSeriesStoreOptions& options);

  // Stops folding and closes the store; with sync_writes off, syncs the WAL first so
  // that a clean shutdown loses nothing even on power failure. Staged batches stay
  // staged and are folded after the next open.
  ~RocksDbSeriesStore() override;

  RocksDbSeriesStore(const RocksDbSeriesStore&) = delete;
  RocksDbSeriesStore& operator=(const RocksDbSeriesStore&) = delete;

  absl::StatusOr<AppendResult> AppendBatch(const std::string& host,
                                           const drip::v1::SampleBatch& batch) override;
  absl::StatusOr<AppendResult> AppendReplicaBatch(const std::string& host,
                                                  const drip::v1::SampleBatch& batch) override;
  absl::StatusOr<uint64_t> AppendRepairSamples(const std::string& host,
                                               const drip::v1::SampleBatch& batch) override;
  absl::StatusOr<uint64_t> AckedSequence(const std::string& host) override;
  absl::Status PutHost(const drip::v1::HostInfo& info) override;
  absl::StatusOr<std::vector<drip::v1::HostInfo>> ListHosts() override;
  absl::StatusOr<std::vector<drip::v1::Series>> ReadSeries(const std::string& host,
                                                           const std::string& component,
                                                           int64_t since_ms, int64_t until_ms,
                                                           size_t max_samples) override;
  absl::StatusOr<std::vector<std::string>> ListComponents(const std::string& host) override;
  // Folds what is staged, then runs a full compaction of `series` (which drops expired
  // chunks), but only once the cutoff has moved by an eighth of the retention since the
  // last one: each full pass rewrites the whole store, and in between ordinary
  // compactions drop expired chunks in whatever files they touch. Returns the chunks
  // dropped by any compaction since the previous call.
  absl::StatusOr<uint64_t> EnforceRetention() override;
  uint64_t ApproximateSizeBytes() override;
  uint64_t CorruptRecordsSkipped() override { return corrupt_skipped_.load(); }
  absl::StatusOr<uint64_t> FreeDiskBytes() override;
  ReportStore* reports() override { return reports_.get(); }

  // Unavailable while RocksDB holds a background error of severity hard or worse (every
  // write fails with it), while the database is closed after a failed reopen, or while
  // the last write failed for any other reason; else OK.
  absl::Status WriteState() override;
  // - Nothing wrong: OK (and forgets a failed write RocksDB did not hold against it).
  // - The error was a full disk and fewer than recovery_free_bytes are free:
  //   ResourceExhausted, nothing done.
  // - A soft error (flushes and compactions stopped, writes not): DB::Resume().
  // - Writes stopped: closes and reopens the database, then reloads what the store keeps
  //   in memory (hosts' marks, the series id counter, the audit sequence), since a write
  //   that reported failure may have reached the WAL and come back with the reopen.
  //   Other calls wait meanwhile. If the open fails the store stays closed (reads and
  //   writes fail Unavailable) until a later Recover() opens it.
  absl::Status Recover() override;

  // Folds every staged batch into its chunks now (the background folder does this on
  // its own). Thread-safe.
  absl::StatusOr<FoldStats> FoldStaged();

  // Gaps recorded for `host`, oldest first. Thread-safe.
  absl::StatusOr<std::vector<GapRecord>> ReadGaps(const std::string& host) override;
  absl::StatusOr<std::vector<drip::v1::InstanceVersion>> ReadInstanceVersions() override;

  // The chunk window in use (the one the store was created with).
  std::chrono::milliseconds chunk_window() const {
    return std::chrono::milliseconds(chunk_window_ms_);
  }

 private:
  // AppendBatch and AppendReplicaBatch: `replica` says which counter the samples go to and
  // whether skipped sequences are gaps.
  absl::StatusOr<AppendResult> Append(const std::string& host, const drip::v1::SampleBatch& batch,
                                      bool replica);
  explicit RocksDbSeriesStore(const RocksDbSeriesStoreOptions& options);

  absl::Status OpenDb();
  // Reads (and on a new store writes) the layout settings and the id counter.
  absl::Status LoadStoreSettings(const StoreHandles& db);
  // Under StoreDb::Reopen, before any other call sees the new database.
  absl::Status ReloadAfterReopen(const StoreHandles& db);
  // The state of `host`, created empty on first use; never null, never freed while the
  // store lives.
  HostState* ReportStateOf(const std::string& host);
  // Reads the host's record from meta unless already done. Requires state->mu.
  // Writes `write` durably (synced as configured); `what` names it in the error.
  absl::Status WriteLocked(const StoreHandles& db, rocksdb::WriteBatch* write,
                           const std::string& what);
  // After a failed write under the host's lock: the ids it allocated leave the cache and
  // the host's record is read again.
  void ForgetFailedWriteLocked(HostState* state,
                               const std::vector<const drip::v1::Sample*>& new_series);
  // ReadSeries on the handles of a lease the caller holds.
  absl::StatusOr<std::vector<drip::v1::Series>> ReadSeriesWith(const StoreHandles& db,
                                                               const std::string& host,
                                                               const std::string& component,
                                                               int64_t since_ms, int64_t until_ms,
                                                               size_t max_samples);
  absl::Status LoadHostLocked(const StoreHandles& db, const std::string& host, HostState* state);
  // What `host` has stored of the series of `samples` from their oldest timestamp (but
  // none before `since_ms`) up to `until_ms`, as HeldSampleKey()s: one read per component.
  // Under the host's lock and on the handles of a lease the caller holds.
  absl::StatusOr<absl::flat_hash_set<std::string>> HeldSamplesLocked(
      const StoreHandles& db, const std::string& host,
      const google::protobuf::RepeatedPtrField<drip::v1::Sample>& samples, int64_t since_ms,
      int64_t until_ms);
  // The id of (host, component, instance): from the cache, else the index, else newly
  // allocated with its index entries added to `batch` (which is why this returns the
  // id even though it may not be durable yet). Requires state->mu.
  absl::StatusOr<uint64_t> SeriesIdLocked(const StoreHandles& db, const std::string& host,
                                          HostState* state, const drip::v1::Sample& sample,
                                          rocksdb::WriteBatch* batch,
                                          std::vector<const drip::v1::Sample*>* new_series,
                                          uint64_t* next_series_id);
  // Adds `batch`'s instance versions for `host` to `write`, and removes what falls out of
  // the kVersionsPerComponent kept per component. Requires the host's state->mu (one
  // writer per host, so the scan below sees every earlier write of the host).
  absl::Status VersionsLocked(const StoreHandles& db, const std::string& host,
                              const drip::v1::SampleBatch& batch, rocksdb::WriteBatch* write);
  // What the last AppendBatch or PutHost write did, for WriteState().
  void NoteWrite(const absl::Status& status);
  // After a retention compaction: removes the index entries of series with no chunk and
  // no staged point left. Returns how many.
  absl::StatusOr<uint64_t> ForgetEmptySeries(const StoreHandles& db);
  static bool HasChunks(const StoreHandles& db, uint64_t series_id);
  static bool StagedHolds(const StoreHandles& db, const std::string& host, uint64_t series_id);
  // Logs and counts one damaged record that a read leaves out (each record once).
  void SkipCorrupt(const std::string& what);
  // A small synced write that proves the store takes writes (Recover).
  absl::Status ProbeWrite();

  const RocksDbSeriesStoreOptions options_;
  int64_t chunk_window_ms_;
  std::shared_ptr<RetentionFilterFactory> retention_;
  std::shared_ptr<StoreErrorListener> errors_;

  std::unique_ptr<StoreDb> db_;
  std::unique_ptr<StagingFolder> folder_;  // stopped before db_ closes
  std::unique_ptr<RocksDbReportStore> reports_;

  std::mutex recover_mu_;  // one Recover() at a time
  // Closed by Recover() for a reopen, and still closed if that failed: the next
  // Recover() opens it again (waiting for space first if the disk was full).
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> corrupt_skipped_{0};  // distinct records in corrupt_seen_
  std::mutex corrupt_mu_;
  std::set<std::string> corrupt_seen_;  // guarded by corrupt_mu_
  bool closed_for_space_ = false;       // guarded by recover_mu_

  std::atomic<bool> write_failed_{false};  // a fast check before write_error_mu_
  std::mutex write_error_mu_;
  absl::Status write_error_;  // guarded by write_error_mu_

  std::mutex hosts_mu_;
  std::unordered_map<std::string, std::unique_ptr<HostState>> hosts_;  // guarded by hosts_mu_

  std::mutex id_mu_;
  uint64_t next_series_id_ = 1;  // guarded by id_mu_; 0 is never a series id

  std::mutex retention_mu_;
  int64_t compacted_cutoff_ms_ = INT64_MIN;  // guarded by retention_mu_
};

// Opens (creating if needed) the store at options.path. Fails with a message naming the
// path when the directory cannot be used (permissions, another collector holds the lock,
// corruption).
absl::StatusOr<std::unique_ptr<SeriesStore>> OpenRocksDbSeriesStore(
    const RocksDbSeriesStoreOptions& options);

}  // namespace drip::collector
