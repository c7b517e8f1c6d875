#include "collector/storage/rocksdb_series_store.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "collector/storage/chunk_codec.h"
#include "collector/storage/chunk_merge_operator.h"
#include "collector/storage/key_range_iterator.h"
#include "collector/storage/retention_filter.h"
#include "collector/storage/rocksdb_log_bridge.h"
#include "collector/storage/rocksdb_tuning.h"
#include "collector/storage/series_key.h"
#include "collector/storage/staged_batch.h"
#include "collector/storage/staging_folder.h"
#include "collector/storage/store_error.h"
#include "common/base/duration.h"
#include "common/base/status_macros.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"
#include "rocksdb/db.h"
#include "rocksdb/transaction_log.h"
#include "rocksdb/write_batch.h"

namespace drip::collector {
namespace {

// A staged process sample: series id, window and point. Reserving this up front keeps
// a batch's encoding to one allocation.
constexpr size_t kStagedBytesPerSample = 32;

// One stored sample, as HeldSamplesLocked lists them: a sample is its series and its
// timestamp.
std::string HeldSampleKey(const std::string& component, const std::string& instance,
                          int64_t timestamp_ms) {
  return fmt::format("{}\x1f{}\x1f{}", component, instance, timestamp_ms);
}

}  // namespace

RocksDbSeriesStore::RocksDbSeriesStore(const RocksDbSeriesStoreOptions& options)
    : options_(options),
      chunk_window_ms_(options.chunk_window.count()),
      retention_(
          std::make_shared<RetentionFilterFactory>(options.clock, options.retention.count())),
      errors_(std::make_shared<StoreErrorListener>()) {}

absl::StatusOr<std::unique_ptr<RocksDbSeriesStore>> RocksDbSeriesStore::Open(
    const RocksDbSeriesStoreOptions& options) {
  if (options.path.empty()) return absl::InvalidArgumentError("storage path is empty");
  if (options.chunk_window.count() <= 0 || options.retention.count() <= 0) {
    return absl::InvalidArgumentError(
        fmt::format("store at {}: chunk window and retention must be positive", options.path));
  }
  if (options.clock == nullptr) {
    return absl::InvalidArgumentError(fmt::format("store at {}: no clock", options.path));
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(options.path, ec);
  if (fs::exists(status) && !fs::is_directory(status)) {
    return absl::FailedPreconditionError(
        fmt::format("store at {}: the path exists and is not a directory", options.path));
  }
  fs::create_directories(options.path, ec);
  if (ec) {
    return absl::UnavailableError(
        fmt::format("store at {}: cannot create the directory: {}", options.path, ec.message()));
  }

  std::unique_ptr<RocksDbSeriesStore> store(new RocksDbSeriesStore(options));
  RETURN_IF_ERROR(store->OpenDb());
  {
    StoreDb::Lease lease(store->db_.get());
    RETURN_IF_ERROR(store->LoadStoreSettings(*lease));
    store->reports_ = std::make_unique<RocksDbReportStore>(store->db_.get(), options.sync_writes);
    RETURN_IF_ERROR(store->reports_->Init(*lease));
  }
  StagingFolderOptions fold;
  fold.path = options.path;
  fold.interval = options.fold_interval;
  fold.fold_bytes = options.fold_bytes;
  store->folder_ = std::make_unique<StagingFolder>(store->db_.get(), fold);
  // What the last run left staged is folded before anything reads: the detector's rebuild
  // reads every series of the fleet window by window, and each read of a host also scans
  // its whole staging area.
  if (absl::StatusOr<FoldStats> folded = store->folder_->FoldAll(); !folded.ok()) {
    return folded.status();
  }
  store->folder_->Start();
  Logger("collector")
      ->info("store at {} open: chunk window {}, retention {}, sync writes {}", options.path,
             FormatDuration(store->chunk_window()), FormatDuration(options.retention),
             options.sync_writes ? "on" : "off");
  return store;
}

absl::StatusOr<std::unique_ptr<SeriesStore>> OpenRocksDbSeriesStore(
    const RocksDbSeriesStoreOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<RocksDbSeriesStore> store, RocksDbSeriesStore::Open(options));
  return std::unique_ptr<SeriesStore>(std::move(store));
}

absl::Status RocksDbSeriesStore::OpenDb() {
  std::shared_ptr<rocksdb::Cache> cache = StoreBlockCache();
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {kSeriesColumnFamily,
       SeriesColumnFamilyOptions(std::make_shared<ChunkMergeOperator>(), retention_, cache)},
      {kMetaColumnFamily, MetaColumnFamilyOptions(cache)},
      {kStagingColumnFamily, StagingColumnFamilyOptions()},
      {kReportsColumnFamily, ReportsColumnFamilyOptions(cache)},
  };
  rocksdb::DBOptions db_options = StoreDbOptions();
  // Not the LOG file beside the data: the disk that fills up takes it down first
  // (rocksdb_log_bridge.h).
  db_options.info_log = std::make_shared<RocksDbLogBridge>();
  db_options.listeners.push_back(errors_);
  // Recover() reopens instead of RocksDB resuming in place (store_error_listener.h).
  db_options.max_bgerror_resume_count = 0;
  if (options_.env != nullptr) db_options.env = options_.env;
  db_ = std::make_unique<StoreDb>(options_.path, std::move(db_options), std::move(families));
  return db_->Open();
}

absl::Status RocksDbSeriesStore::LoadStoreSettings(const StoreHandles& db) {
  const rocksdb::ReadOptions read;
  std::string value;

  // The chunk window is part of the layout: keep the one the store was created with.
  rocksdb::Status s = db.db->Get(read, db.meta, ToSlice(kChunkWindowKey), &value);
  if (s.ok()) {
    uint64_t stored = 0;
    if (!DecodeUint64(value, &stored) || stored == 0 || stored > INT64_MAX) {
      return absl::DataLossError(
          fmt::format("store at {}: stored chunk window is corrupt", options_.path));
    }
    if (static_cast<int64_t>(stored) != chunk_window_ms_) {
      Logger("collector")
          ->warn("store at {} was created with chunk window {}; keeping it (configured: {})",
                 options_.path, FormatDuration(std::chrono::milliseconds(stored)),
                 FormatDuration(options_.chunk_window));
    }
    chunk_window_ms_ = static_cast<int64_t>(stored);
  } else if (s.IsNotFound()) {
    rocksdb::WriteOptions write;
    write.sync = true;
    s = db.db->Put(write, db.meta, ToSlice(kChunkWindowKey),
                   EncodeUint64(static_cast<uint64_t>(chunk_window_ms_)));
    if (!s.ok()) return StoreError(options_.path, "recording the chunk window", s);
  } else {
    return StoreError(options_.path, "reading the chunk window", s);
  }
  retention_->set_chunk_window_ms(chunk_window_ms_);
  // Retention's "now" never passes the newest stored sample (retention_filter.h): read it
  // from the host records, one per host, before anything is expired.
  {
    KeyRangeIterator hosts = KeyRangeIterator::Prefix(db.db, db.meta, kHostRecordPrefix);
    drip::v1::HostInfo record;
    for (hosts.SeekToStart(); hosts->Valid(); hosts->Next()) {
      if (record.ParseFromArray(hosts->value().data(), static_cast<int>(hosts->value().size()))) {
        retention_->NoteStoredSampleMs(record.last_sample_ms());
      }
    }
    if (!hosts->status().ok()) {
      return StoreError(options_.path, "reading the host records", hosts->status());
    }
  }

  // Concurrent batches persist the id counter in whatever order their writes land, so
  // the stored counter may lag; every allocated id that became durable has its "i/"
  // entry in the same write, so the highest one settles it.
  uint64_t next_id = 1;
  s = db.db->Get(read, db.meta, ToSlice(kNextSeriesIdKey), &value);
  if (s.ok()) {
    if (!DecodeUint64(value, &next_id)) {
      return absl::DataLossError(
          fmt::format("store at {}: stored series id counter is corrupt", options_.path));
    }
  } else if (!s.IsNotFound()) {
    return StoreError(options_.path, "reading the series id counter", s);
  }
  {
    std::unique_ptr<rocksdb::Iterator> it(db.db->NewIterator(read, db.meta));
    std::string last_names_key(kSeriesNamesPrefix);
    last_names_key.append(8, '\xff');
    it->SeekForPrev(last_names_key);
    uint64_t last_id = 0;
    if (it->Valid() && ParseSeriesNamesKey(ToView(it->key()), &last_id)) {
      next_id = std::max(next_id, last_id + 1);
    }
    if (!it->status().ok()) {
      return StoreError(options_.path, "reading the series index", it->status());
    }
  }
  {
    // Never backwards: after a reopen, ids handed out in memory may be ahead of the store.
    std::lock_guard<std::mutex> lock(id_mu_);
    next_series_id_ = std::max<uint64_t>({next_series_id_, next_id, 1});
  }

  s = db.db->Get(read, db.meta, ToSlice(kRetentionCutoffKey), &value);
  if (s.ok()) {
    uint64_t cutoff = 0;
    // Only at open: a reopen runs under the database's exclusive lock, and
    // EnforceRetention takes retention_mu_ before a lease. The value in memory is good.
    if (DecodeUint64(value, &cutoff) && retention_mu_.try_lock()) {
      compacted_cutoff_ms_ = std::max(compacted_cutoff_ms_, static_cast<int64_t>(cutoff));
      retention_mu_.unlock();
    }
  } else if (!s.IsNotFound()) {
    return StoreError(options_.path, "reading the retention state", s);
  }
  return absl::OkStatus();
}

absl::Status RocksDbSeriesStore::ReloadAfterReopen(const StoreHandles& db) {
  RETURN_IF_ERROR(LoadStoreSettings(db));
  RETURN_IF_ERROR(reports_->Init(db));
  // A write that reported failure may have reached the WAL and be back: marks are read
  // again before the next batch of each host, or a resend would be stored twice. Cached
  // series ids stay good: only ids whose write succeeded are cached.
  std::lock_guard<std::mutex> lock(hosts_mu_);
  for (auto& [host, state] : hosts_) {
    std::lock_guard<std::mutex> host_lock(state->mu);
    state->loaded = false;
  }
  return absl::OkStatus();
}

RocksDbSeriesStore::~RocksDbSeriesStore() {
  if (folder_ != nullptr) folder_->Stop();
  folder_.reset();
  reports_.reset();
  if (db_ == nullptr) return;
  // Not after a write error: syncing a WAL whose append failed is what RocksDB 7.8
  // asserts against, and what it holds was not acknowledged anyway.
  db_->Close(!options_.sync_writes && !errors_->state().stops_writes());
}

HostState* RocksDbSeriesStore::ReportStateOf(const std::string& host) {
  std::lock_guard<std::mutex> lock(hosts_mu_);
  std::unique_ptr<HostState>& state = hosts_[host];
  if (state == nullptr) state = std::make_unique<HostState>();
  return state.get();
}

absl::Status RocksDbSeriesStore::LoadHostLocked(const StoreHandles& db, const std::string& host,
                                                HostState* state) {
  if (state->loaded) return absl::OkStatus();
  std::string value;
  rocksdb::Status s = db.db->Get(rocksdb::ReadOptions(), db.meta, HostRecordKey(host), &value);
  if (s.IsNotFound()) {
    state->record.Clear();
    state->record.set_host(host);
    state->exists = false;
  } else if (!s.ok()) {
    return StoreError(options_.path, fmt::format("reading host {}", host), s);
  } else if (!state->record.ParseFromString(value)) {
    return absl::DataLossError(
        fmt::format("store at {}: the record of host {} is corrupt", options_.path, host));
  } else {
    state->exists = true;
  }
  state->loaded = true;
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> RocksDbSeriesStore::SeriesIdLocked(
    const StoreHandles& db, const std::string& host, HostState* state,
    const drip::v1::Sample& sample, rocksdb::WriteBatch* batch,
    std::vector<const drip::v1::Sample*>* new_series, uint64_t* next_series_id) {
  if (std::optional<uint64_t> id = state->series.Find(sample.component(), sample.instance())) {
    return *id;
  }
  const std::string index_key = SeriesIndexKey(host, sample.component(), sample.instance());
  std::string value;
  rocksdb::Status s = db.db->Get(rocksdb::ReadOptions(), db.meta, index_key, &value);
  if (s.ok()) {
    uint64_t id = 0;
    if (!DecodeUint64(value, &id)) {
      return absl::DataLossError(
          fmt::format("store at {}: series index entry of {} {} {} is corrupt", options_.path, host,
                      sample.component(), sample.instance()));
    }
    state->series.Insert(sample.component(), sample.instance(), id);
    return id;
  }
  if (!s.IsNotFound()) {
    return StoreError(options_.path, fmt::format("reading the series index of host {}", host), s);
  }

  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(id_mu_);
    id = next_series_id_++;
    *next_series_id = std::max(*next_series_id, next_series_id_);
  }
  rocksdb::Status put = batch->Put(db.meta, index_key, EncodeUint64(id));
  if (put.ok()) {
    put = batch->Put(db.meta, SeriesNamesKey(id),
                     EncodeSeriesNames(host, sample.component(), sample.instance()));
  }
  if (!put.ok()) return StoreError(options_.path, "building a batch", put);
  // Cached before it is durable so that later samples of this batch find it; AppendBatch
  // takes it out again if the write fails.
  state->series.Insert(sample.component(), sample.instance(), id);
  new_series->push_back(&sample);
  return id;
}

absl::StatusOr<AppendResult> RocksDbSeriesStore::AppendBatch(const std::string& host,
                                                             const drip::v1::SampleBatch& batch) {
  return Append(host, batch, /*replica=*/false);
}

absl::StatusOr<AppendResult> RocksDbSeriesStore::AppendReplicaBatch(
    const std::string& host, const drip::v1::SampleBatch& batch) {
  return Append(host, batch, /*replica=*/true);
}

absl::StatusOr<AppendResult> RocksDbSeriesStore::Append(const std::string& host,
                                                        const drip::v1::SampleBatch& batch,
                                                        bool replica) {
  if (host.empty()) return absl::InvalidArgumentError("AppendBatch: host is empty");
  StoreDb::Lease db(db_.get());
  if (!db.open()) return db.ClosedError();
  HostState* state = ReportStateOf(host);
  std::lock_guard<std::mutex> lock(state->mu);
  RETURN_IF_ERROR(LoadHostLocked(*db, host, state));

  AppendResult result;
  const uint64_t mark = state->record.acked_sequence();
  const uint64_t sequence = batch.sequence();
  if (sequence <= mark) return result;  // a resend of something durable

  // Every sequence between the mark and this batch is lost for good (a later batch at
  // or below the new mark would be taken for a resend). With no mark yet, only the
  // agent can say where its drops began.
  const uint64_t gap_from = mark != 0 ? mark + 1 : batch.first_dropped_sequence();
  if (gap_from != 0 && gap_from < sequence) result.missing_batches = sequence - gap_from;

  // A repair may have brought some of this batch first: the batch reached another copy,
  // which sent its samples here before the batch came (the agent's resend to a new
  // owner, or the owner's copy to a replica that was slow). They are stored once.
  const drip::v1::SampleBatch* kept = &batch;
  const int64_t repaired_newest = state->record.repaired_newest_ms();
  if (repaired_newest != 0 && batch.samples_size() > 0) {
    int64_t oldest = batch.samples(0).timestamp_ms();
    for (const drip::v1::Sample& sample : batch.samples()) {
      oldest = std::min(oldest, sample.timestamp_ms());
    }
    if (oldest <= repaired_newest) {
      ASSIGN_OR_RETURN(absl::flat_hash_set<std::string> held,
                       HeldSamplesLocked(*db, host, batch.samples(),
                                         std::numeric_limits<int64_t>::min(), repaired_newest));
      drip::v1::SampleBatch& unheld = result.stored_part.emplace(batch);
      unheld.clear_samples();
      for (const drip::v1::Sample& sample : batch.samples()) {
        if (held.insert(HeldSampleKey(sample.component(), sample.instance(), sample.timestamp_ms()))
                .second) {
          *unheld.add_samples() = sample;
        }
      }
      kept = &unheld;
    }
  }

  const int64_t now_ms = options_.clock->NowMs();
  // Only between batches: a batch's new ids must stay cached until its write is done.
  state->series.TrimIfFull();

  // The samples go in as one staged value (staged_batch.h); the folder moves them into
  // their chunks later, many batches at a time.
  rocksdb::WriteBatch write;
  std::vector<const drip::v1::Sample*> new_series;
  uint64_t next_series_id = 0;
  std::string staged;
  staged.reserve(static_cast<size_t>(kept->samples_size()) * kStagedBytesPerSample + 1);
  StagedBatchWriter staged_writer(&staged);
  absl::Status status;
  for (const drip::v1::Sample& sample : kept->samples()) {
    absl::StatusOr<uint64_t> id =
        SeriesIdLocked(*db, host, state, sample, &write, &new_series, &next_series_id);
    if (!id.ok()) {
      status = id.status();
      break;
    }
    staged_writer.Append(*id, WindowStart(sample.timestamp_ms(), chunk_window_ms_), sample);
  }
  if (status.ok() && kept->samples_size() > 0) {
    rocksdb::Status s = write.Put(db->staging, StagingKey(host, sequence), staged);
    if (!s.ok()) status = StoreError(options_.path, "building a batch", s);
  }
  if (status.ok() && batch.versions_size() > 0) status = VersionsLocked(*db, host, batch, &write);

  drip::v1::HostInfo record = state->record;
  if (status.ok()) {
    if (!state->exists) record.set_first_seen_ms(now_ms);
    record.set_host(host);
    record.set_connected(false);
    record.set_acked_sequence(sequence);
    const auto samples = static_cast<uint64_t>(kept->samples_size());
    if (replica) {
      record.set_replica_samples_stored(record.replica_samples_stored() + samples);
    } else {
      record.set_samples_stored(record.samples_stored() + samples);
      record.set_gaps(record.gaps() + result.missing_batches);
    }
    int64_t newest = record.last_sample_ms();
    for (const drip::v1::Sample& sample : kept->samples()) {
      newest = std::max(newest, sample.timestamp_ms());
    }
    record.set_last_sample_ms(newest);
    record.set_last_seen_ms(std::max(record.last_seen_ms(), now_ms));
    // Before the write, so that a compaction racing it cannot take the batch's own
    // samples for expired under a clock that jumped ahead.
    retention_->NoteStoredSampleMs(newest);
    rocksdb::Status s = write.Put(db->meta, HostRecordKey(host), record.SerializeAsString());
    if (s.ok() && next_series_id != 0) {
      s = write.Put(db->meta, ToSlice(kNextSeriesIdKey), EncodeUint64(next_series_id));
    }
    // A replica's skipped sequences are copies it missed, not the agent's drops: the
    // owner has them.
    if (s.ok() && result.missing_batches > 0 && !replica) {
      GapRecord gap{gap_from, sequence, now_ms};
      // The agent's account of what it dropped; without one (batches lost before a
      // restart of the agent), at least where the gap ends: this batch's first sample.
      if (batch.first_dropped_sequence() != 0 && batch.dropped_samples() > 0) {
        gap.from_ms = batch.dropped_from_ms();
        gap.until_ms = batch.dropped_until_ms();
        gap.samples = batch.dropped_samples();
        // The agent may count batches that did reach the store before their ack was
        // lost (a collector crash): the gap starts after what is stored.
        if (batch.first_dropped_sequence() < gap_from) {
          gap.from_ms = std::max(gap.from_ms, state->record.last_sample_ms() + 1);
          gap.until_ms = std::max(gap.until_ms, gap.from_ms);
        }
      } else if (batch.samples_size() > 0) {
        gap.until_ms = batch.samples(0).timestamp_ms();
      }
      s = write.Put(db->meta, GapRecordKey(host, gap_from), EncodeGapValue(gap));
    }
    if (!s.ok()) status = StoreError(options_.path, "building a batch", s);
  }
  if (status.ok()) {
    status = WriteLocked(*db, &write, fmt::format("writing batch {} of host {}", sequence, host));
  }
  if (!status.ok()) {
    ForgetFailedWriteLocked(state, new_series);
    return status;
  }

  state->record = std::move(record);
  state->exists = true;
  if (kept->samples_size() > 0) folder_->NoteStaged(staged.size());
  result.stored = true;
  result.samples_stored = static_cast<uint64_t>(kept->samples_size());
  return result;
}

absl::StatusOr<uint64_t> RocksDbSeriesStore::AppendRepairSamples(
    const std::string& host, const drip::v1::SampleBatch& batch) {
  if (host.empty()) return absl::InvalidArgumentError("AppendRepairSamples: host is empty");
  StoreDb::Lease db(db_.get());
  if (!db.open()) return db.ClosedError();
  HostState* state = ReportStateOf(host);
  std::lock_guard<std::mutex> lock(state->mu);
  RETURN_IF_ERROR(LoadHostLocked(*db, host, state));
  if (!state->exists) {
    return absl::FailedPreconditionError(
        fmt::format("repair of host {}: the host is not known here", host));
  }

  // What is here already: the other copy sends whole windows, most of whose samples this
  // copy usually has.
  const int64_t cutoff_ms = retention_->CutoffMs();
  ASSIGN_OR_RETURN(absl::flat_hash_set<std::string> held,
                   HeldSamplesLocked(*db, host, batch.samples(), cutoff_ms,
                                     std::numeric_limits<int64_t>::max()));

  // Straight into the chunks: a chunk is points in any order (reads sort them), and a
  // repair has no sequence to stage under.
  rocksdb::WriteBatch write;
  std::vector<const drip::v1::Sample*> new_series;
  uint64_t next_series_id = 0;
  uint64_t added = 0;
  int64_t newest_added = std::numeric_limits<int64_t>::min();
  std::string point;
  absl::Status status;
  for (const drip::v1::Sample& sample : batch.samples()) {
    if (sample.timestamp_ms() < cutoff_ms ||
        !held.insert(HeldSampleKey(sample.component(), sample.instance(), sample.timestamp_ms()))
             .second) {
      continue;
    }
    absl::StatusOr<uint64_t> id =
        SeriesIdLocked(*db, host, state, sample, &write, &new_series, &next_series_id);
    if (!id.ok()) {
      status = id.status();
      break;
    }
    const int64_t window = WindowStart(sample.timestamp_ms(), chunk_window_ms_);
    point.clear();
    AppendPoint(sample, window, &point);
    if (rocksdb::Status s = write.Merge(db->series, ChunkKey(*id, window), point); !s.ok()) {
      status = StoreError(options_.path, "building a repair", s);
      break;
    }
    newest_added = std::max(newest_added, sample.timestamp_ms());
    ++added;
  }
  drip::v1::HostInfo record = state->record;
  if (status.ok() && added > 0) {
    record.set_replica_samples_stored(record.replica_samples_stored() + added);
    record.set_repaired_newest_ms(std::max(record.repaired_newest_ms(), newest_added));
    record.set_last_sample_ms(std::max(record.last_sample_ms(), newest_added));
    retention_->NoteStoredSampleMs(newest_added);
    rocksdb::Status s = write.Put(db->meta, HostRecordKey(host), record.SerializeAsString());
    if (s.ok() && next_series_id != 0) {
      s = write.Put(db->meta, ToSlice(kNextSeriesIdKey), EncodeUint64(next_series_id));
    }
    status = s.ok() ? WriteLocked(*db, &write, fmt::format("repairing host {}", host))
                    : StoreError(options_.path, "building a repair", s);
  }
  if (!status.ok()) {
    ForgetFailedWriteLocked(state, new_series);
    return status;
  }
  state->record = std::move(record);
  return added;
}

absl::StatusOr<absl::flat_hash_set<std::string>> RocksDbSeriesStore::HeldSamplesLocked(
    const StoreHandles& db, const std::string& host,
    const google::protobuf::RepeatedPtrField<drip::v1::Sample>& samples, int64_t since_ms,
    int64_t until_ms) {
  std::map<std::string, std::pair<int64_t, int64_t>> spans;  // component -> [first, last]
  for (const drip::v1::Sample& sample : samples) {
    const int64_t t = sample.timestamp_ms();
    if (t < since_ms || t > until_ms) continue;
    auto [it, inserted] = spans.try_emplace(sample.component(), t, t);
    it->second.first = std::min(it->second.first, t);
    it->second.second = std::max(it->second.second, t);
  }
  absl::flat_hash_set<std::string> held;
  for (const auto& [component, span] : spans) {
    // Under the caller's lease: a second one could wait behind a reopen that waits for it.
    ASSIGN_OR_RETURN(std::vector<drip::v1::Series> stored,
                     ReadSeriesWith(db, host, component, span.first, span.second + 1, 0));
    for (const drip::v1::Series& series : stored) {
      for (const drip::v1::Sample& sample : series.samples()) {
        held.insert(HeldSampleKey(component, series.instance(), sample.timestamp_ms()));
      }
    }
  }
  return held;
}

absl::Status RocksDbSeriesStore::WriteLocked(const StoreHandles& db, rocksdb::WriteBatch* write,
                                             const std::string& what) {
  rocksdb::WriteOptions options;
  options.sync = options_.sync_writes;
  rocksdb::Status s = db.db->Write(options, write);
  absl::Status status = s.ok() ? absl::OkStatus() : StoreError(options_.path, what, s);
  NoteWrite(status);
  return status;
}

void RocksDbSeriesStore::ForgetFailedWriteLocked(
    HostState* state, const std::vector<const drip::v1::Sample*>& new_series) {
  for (const drip::v1::Sample* sample : new_series) {
    state->series.Erase(sample->component(), sample->instance());
  }
  // A failed write may still have reached the WAL (a sync that failed after the write):
  // read the mark back from the store next time instead of trusting memory.
  state->loaded = false;
}

absl::Status RocksDbSeriesStore::VersionsLocked(const StoreHandles& db, const std::string& host,
                                                const drip::v1::SampleBatch& batch,
                                                rocksdb::WriteBatch* write) {
  // Per component: what is stored (key -> instance) plus this batch's new instances; the
  // newest kVersionsPerComponent by first sight stay.
  std::map<std::string, std::vector<const drip::v1::InstanceVersion*>> by_component;
  for (const drip::v1::InstanceVersion& v : batch.versions()) {
    by_component[v.component()].push_back(&v);
  }
  for (const auto& [component, versions] : by_component) {
    std::map<std::string, std::string> kept;  // key -> value (empty: already stored)
    absl::flat_hash_set<std::string> instances;
    const std::string prefix = VersionRecordPrefix(host, component);
    KeyRangeIterator it = KeyRangeIterator::Prefix(db.db, db.meta, prefix);
    for (it.SeekToStart(); it->Valid(); it->Next()) {
      drip::v1::InstanceVersion stored;
      if (stored.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
        instances.insert(stored.instance());
      }
      kept.emplace(it->key().ToString(), "");
    }
    if (!it->status().ok()) {
      return StoreError(options_.path, fmt::format("reading versions of host {}", host),
                        it->status());
    }
    for (const drip::v1::InstanceVersion* v : versions) {
      // An agent that restarted names its running instances again: the first record,
      // with the time the instance was first seen, stays.
      if (!instances.insert(v->instance()).second) continue;
      drip::v1::InstanceVersion record = *v;
      record.set_host(host);
      kept[VersionRecordKey(host, component, v->first_seen_ms(), v->instance())] =
          record.SerializeAsString();
    }
    size_t excess = kept.size() > kVersionsPerComponent ? kept.size() - kVersionsPerComponent : 0;
    for (const auto& [key, value] : kept) {
      rocksdb::Status s;
      if (excess > 0) {
        --excess;
        if (value.empty()) s = write->Delete(db.meta, key);
      } else if (!value.empty()) {
        s = write->Put(db.meta, key, value);
      }
      if (!s.ok()) return StoreError(options_.path, "building a batch", s);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<drip::v1::InstanceVersion>> RocksDbSeriesStore::ReadInstanceVersions() {
  std::vector<drip::v1::InstanceVersion> versions;
  StoreDb::Lease db(db_.get());
  if (!db.open()) return db.ClosedError();
  KeyRangeIterator it = KeyRangeIterator::Prefix(db->db, db->meta, kVersionRecordPrefix);
  for (it.SeekToStart(); it->Valid(); it->Next()) {
    drip::v1::InstanceVersion& v = versions.emplace_back();
    if (!v.ParseFromArray(it->value().data(), static_cast<int>(it->value().size())) ||
        v.host().empty()) {
      versions.pop_back();
      SkipCorrupt("an instance version record");
    }
  }
  if (!it->status().ok()) {
    return StoreError(options_.path, "reading instance versions", it->status());
  }
  return versions;
}

absl::StatusOr<uint64_t> RocksDbSeriesStore::AckedSequence(const std::string& host) {
  StoreDb::Lease db(db_.get());
  if (!db.open()) return db.ClosedError();
  HostState* state = ReportStateOf(host);
  std::lock_guard<std::mutex> lock(state->mu);
  RETURN_IF_ERROR(LoadHostLocked(*db, host, state));
  return state->record.acked_sequence();
}

absl::Status RocksDbSeriesStore::PutHost(const drip::v1::HostInfo& info) {
  if (info.host().empty()) return absl::InvalidArgumentError("PutHost: host is empty");
  StoreDb::Lease db(db_.get());
  if (!db.open()) return db.ClosedError();
  HostState* state = ReportStateOf(info.host());
  std::lock_guard<std::mutex> lock(state->mu);
  RETURN_IF_ERROR(LoadHostLocked(*db, info.host(), state));

  const int64_t now_ms = options_.clock->NowMs();
  drip::v1::HostInfo record = state->record;
  if (!state->exists) {
    record.set_host(info.host());
    record.set_first_seen_ms(info.first_seen_ms() != 0 ? info.first_seen_ms() : now_ms);
  }
  *record.mutable_labels() = info.labels();
  record.set_agent_version(info.agent_version());
  record.set_memory_total_bytes(info.memory_total_bytes());
  record.set_sampler(info.sampler());
  record.set_connected(false);
  // A Hello is a sign of life too, but last_seen never moves backwards.
  record.set_last_seen_ms(std::max(record.last_seen_ms(), info.last_seen_ms()));

  rocksdb::WriteOptions options;
  options.sync = options_.sync_writes;
  rocksdb::Status s =
      db->db->Put(options, db->meta, HostRecordKey(info.host()), record.SerializeAsString());
  if (!s.ok()) {
    state->loaded = false;
    absl::Status error = StoreError(options_.path, fmt::format("writing host {}", info.host()), s);
    NoteWrite(error);
    return error;
  }
  NoteWrite(absl::OkStatus());
  state->record = std::move(record);
  state->exists = true;
  return absl::OkStatus();
}

void RocksDbSeriesStore::SkipCorrupt(const std::string& what) {
  {
    // Each damaged record is counted and logged once, however often reads pass it.
    std::lock_guard<std::mutex> lock(corrupt_mu_);
    if (!corrupt_seen_.insert(what).second) return;
  }
  corrupt_skipped_.fetch_add(1);
  Logger("collector")
      ->error(
          "store at {}: skipping {}: it is corrupt (the rest of the store is served; "
          "drip_storage_corrupt_records)",
          options_.path, what);
}

absl::StatusOr<std::vector<drip::v1::HostInfo>> RocksDbSeriesStore::ListHosts() {
  std::vector<drip::v1::HostInfo> hosts;
  StoreDb::Lease db(db_.get());
  if (!db.open()) return db.ClosedError();
  KeyRangeIterator it = KeyRangeIterator::Prefix(db->db, db->meta, kHostRecordPrefix);
  for (it.SeekToStart(); it->Valid(); it->Next()) {
    drip::v1::HostInfo& info = hosts.emplace_back();
    if (!info.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      // One damaged record must not hide the fleet from `dripctl hosts`.
      SkipCorrupt(
          fmt::format("the record of host {}", ToView(it->key()).substr(kHostRecordPrefix.size())));
      hosts.pop_back();
      continue;
    }
    info.set_connected(false);
  }
  if (!it->status().ok()) return StoreError(options_.path, "listing hosts", it->status());
  return hosts;
}

absl::StatusOr<std::vector<std::string>> RocksDbSeriesStore::ListComponents(
    const std::string& host) {
  const std::string prefix = SeriesIndexHostPrefix(host);
  StoreDb::Lease db(db_.get());
  if (!db.open()) return db.ClosedError();
  KeyRangeIterator it = KeyRangeIterator::Prefix(db->db, db->meta, prefix);
  std::vector<std::string> components;
  std::string component;
  for (it.SeekToStart(); it->Valid(); it->Next()) {
    if (!ParseSeriesIndexComponent(ToView(it->key()), prefix, &component)) {
      SkipCorrupt(fmt::format("a series index entry of host {}", host));
      continue;
    }
    // Keys are sorted, so a component's instances are adjacent.
    if (components.empty() || components.back() != component) components.push_back(component);
  }
  if (!it->status().ok()) {
    return StoreError(options_.path, fmt::format("listing the components of {}", host),
                      it->status());
  }
  return components;
}

absl::StatusOr<std::vector<drip::v1::Series>> RocksDbSeriesStore::ReadSeries(
    const std::string& host, const std::string& component, int64_t since_ms, int64_t until_ms,
    size_t max_samples) {
  StoreDb::Lease db(db_.get());
  if (!db.open()) return db.ClosedError();
  return ReadSeriesWith(*db, host, component, since_ms, until_ms, max_samples);
}

absl::StatusOr<std::vector<drip::v1::Series>> RocksDbSeriesStore::ReadSeriesWith(
    const StoreHandles& handles, const std::string& host, const std::string& component,
    int64_t since_ms, int64_t until_ms, size_t max_samples) {
  // Expired samples stay invisible even before compaction has dropped their chunk.
  const int64_t since = std::max(since_ms, retention_->CutoffMs());
  const int64_t until = until_ms == 0 ? INT64_MAX : until_ms;
  std::vector<drip::v1::Series> result;
  if (since >= until) return result;
  const StoreHandles* db = &handles;
  // One snapshot, so that the index and the chunks are seen at the same instant.
  const rocksdb::Snapshot* snapshot = db->db->GetSnapshot();
  struct SnapshotReleaser {
    rocksdb::DB* db;
    const rocksdb::Snapshot* snapshot;
    ~SnapshotReleaser() { db->ReleaseSnapshot(snapshot); }
  } releaser{db->db, snapshot};

  struct Instance {
    std::string name;
    uint64_t series_id;
  };
  std::vector<Instance> instances;
  {
    const std::string prefix = SeriesIndexPrefix(host, component);
    KeyRangeIterator it = KeyRangeIterator::Prefix(db->db, db->meta, prefix, snapshot);
    for (it.SeekToStart(); it->Valid(); it->Next()) {
      Instance instance;
      if (!ParseSeriesIndexInstance(ToView(it->key()), prefix, &instance.name) ||
          !DecodeUint64(ToView(it->value()), &instance.series_id)) {
        SkipCorrupt(fmt::format("a series index entry of host {} component {}", host, component));
        continue;
      }
      instances.push_back(std::move(instance));
    }
    if (!it->status().ok()) {
      return StoreError(options_.path, fmt::format("reading the index of {} {}", host, component),
                        it->status());
    }
  }

  // Samples per instance: first from the chunks, then whatever is still staged.
  std::vector<std::vector<drip::v1::Sample>> samples(instances.size());
  size_t decoded_samples = 0;  // decoded so far, before trimming to the range
  auto within_limit = [&]() -> absl::Status {
    if (max_samples == 0 || decoded_samples <= max_samples) return absl::OkStatus();
    return absl::ResourceExhaustedError(fmt::format(
        "{} {} holds more than {} samples in the range asked for; ask for a shorter one", host,
        component, max_samples));
  };
  std::unordered_map<uint64_t, size_t> instance_of;
  auto log_damage = [&](const std::string& where, const absl::Status& status) {
    // Show what is readable; the rest of this one value is lost either way.
    Logger("collector")
        ->error("store at {}: {} of host {} component {}: {}", options_.path, where, host,
                component, std::string(status.message()));
  };
  for (size_t i = 0; i < instances.size(); ++i) {
    const Instance& instance = instances[i];
    instance_of[instance.series_id] = i;
    // Chunks starting at or after `until` hold nothing before it.
    KeyRangeIterator it(db->db, db->series,
                        ChunkKey(instance.series_id, WindowStart(since, chunk_window_ms_)),
                        until == INT64_MAX ? ChunkKey(instance.series_id + 1, INT64_MIN)
                                           : ChunkKey(instance.series_id, until),
                        snapshot);
    for (it.SeekToStart(); it->Valid(); it->Next()) {
      uint64_t series_id = 0;
      int64_t window_start = 0;
      if (!ParseChunkKey(ToView(it->key()), &series_id, &window_start)) continue;
      const size_t before = samples[i].size();
      absl::Status decoded = DecodeChunk(ToView(it->value()), window_start, &samples[i]);
      if (!decoded.ok()) {
        log_damage(fmt::format("chunk of instance {} at {}", instance.name, window_start), decoded);
      }
      decoded_samples += samples[i].size() - before;
      if (absl::Status fits = within_limit(); !fits.ok()) return fits;
    }
    if (!it->status().ok()) {
      return StoreError(options_.path,
                        fmt::format("reading series {} {} {}", host, component, instance.name),
                        it->status());
    }
  }
  if (!instances.empty()) {
    KeyRangeIterator it =
        KeyRangeIterator::Prefix(db->db, db->staging, StagingPrefix(host), snapshot);
    for (it.SeekToStart(); it->Valid(); it->Next()) {
      StagedBatchReader reader(ToView(it->value()));
      StagedPoint point;
      while (reader.Next(&point)) {
        auto found = instance_of.find(point.series_id);
        if (found == instance_of.end()) continue;
        const size_t before = samples[found->second].size();
        absl::Status decoded =
            DecodeChunk(point.point, point.window_start_ms, &samples[found->second]);
        if (!decoded.ok()) log_damage("a staged point", decoded);
        decoded_samples += samples[found->second].size() - before;
        if (absl::Status fits = within_limit(); !fits.ok()) return fits;
      }
      if (!reader.status().ok()) log_damage("a staged batch", reader.status());
    }
    if (!it->status().ok()) {
      return StoreError(options_.path, fmt::format("reading staged batches of host {}", host),
                        it->status());
    }
  }

  for (size_t i = 0; i < instances.size(); ++i) {
    std::vector<drip::v1::Sample>& points = samples[i];
    auto kept_end = std::stable_partition(points.begin(), points.end(), [&](const auto& s) {
      return s.timestamp_ms() >= since && s.timestamp_ms() < until;
    });
    points.erase(kept_end, points.end());
    if (points.empty()) continue;
    // A chunk holds points in arrival order, which an agent's clock step can upset.
    std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
      return a.timestamp_ms() < b.timestamp_ms();
    });
    drip::v1::Series& series = result.emplace_back();
    series.set_host(host);
    series.set_component(component);
    series.set_instance(instances[i].name);
    series.mutable_samples()->Reserve(static_cast<int>(points.size()));
    for (drip::v1::Sample& sample : points) *series.add_samples() = std::move(sample);
  }
  std::sort(result.begin(), result.end(), [](const drip::v1::Series& a, const drip::v1::Series& b) {
    const int64_t ta = a.samples(0).timestamp_ms();
    const int64_t tb = b.samples(0).timestamp_ms();
    if (ta != tb) return ta < tb;
    return a.instance() < b.instance();
  });
  return result;
}

absl::StatusOr<FoldStats> RocksDbSeriesStore::FoldStaged() { return folder_->FoldAll(); }

absl::StatusOr<uint64_t> RocksDbSeriesStore::EnforceRetention() {
  std::lock_guard<std::mutex> lock(retention_mu_);
  // Staged samples are out of the compaction filter's reach until folded.
  if (absl::StatusOr<FoldStats> folded = FoldStaged(); !folded.ok()) return folded.status();
  const int64_t cutoff = retention_->CutoffMs();
  if (cutoff == INT64_MIN) return retention_->TakeDroppedChunks();  // no sample stored yet
  const int64_t slack = std::max<int64_t>(chunk_window_ms_, options_.retention.count() / 8);
  const bool due = compacted_cutoff_ms_ == INT64_MIN ||
                   (cutoff > compacted_cutoff_ms_ && cutoff - compacted_cutoff_ms_ >= slack);
  if (due) {
    // Taken after folding: the folder takes its own lease (store_db.h).
    StoreDb::Lease db(db_.get());
    if (!db.open()) return db.ClosedError();
    rocksdb::CompactRangeOptions compact;
    // Ingest keeps its background compactions meanwhile; this one only adds work.
    compact.exclusive_manual_compaction = false;
    // The default (kIfHaveCompactionFilter) already rewrites the bottom level, where
    // the oldest chunks are.
    rocksdb::Status s = db->db->CompactRange(compact, db->series, nullptr, nullptr);
    if (!s.ok()) return StoreError(options_.path, "retention compaction", s);
    rocksdb::WriteOptions options;
    options.sync = options_.sync_writes;
    s = db->db->Put(options, db->meta, ToSlice(kRetentionCutoffKey),
                    EncodeUint64(static_cast<uint64_t>(cutoff)));
    if (!s.ok()) return StoreError(options_.path, "recording the retention state", s);
    compacted_cutoff_ms_ = cutoff;
    // The compaction has dropped the expired chunks: series left with none leave the
    // index too, so that listing a host's components, and the detector's replay at start,
    // do not grow with every process that ever ran.
    absl::StatusOr<uint64_t> forgotten = ForgetEmptySeries(*db);
    if (!forgotten.ok()) return forgotten.status();
    if (*forgotten > 0) {
      Logger("collector")
          ->info("store at {}: {} series with no sample left after retention left the index",
                 options_.path, *forgotten);
    }
  }
  return retention_->TakeDroppedChunks();
}

bool RocksDbSeriesStore::HasChunks(const StoreHandles& db, uint64_t series_id) {
  KeyRangeIterator it(db.db, db.series, ChunkKey(series_id, INT64_MIN),
                      ChunkKey(series_id + 1, INT64_MIN));
  it.SeekToStart();
  return it->Valid() || !it->status().ok();  // an error keeps the series
}

bool RocksDbSeriesStore::StagedHolds(const StoreHandles& db, const std::string& host,
                                     uint64_t series_id) {
  KeyRangeIterator it = KeyRangeIterator::Prefix(db.db, db.staging, StagingPrefix(host));
  for (it.SeekToStart(); it->Valid(); it->Next()) {
    StagedBatchReader reader(ToView(it->value()));
    StagedPoint point;
    while (reader.Next(&point)) {
      if (point.series_id == series_id) return true;
    }
    if (!reader.status().ok()) return true;  // damaged: cannot tell, keep the series
  }
  return !it->status().ok();
}

absl::StatusOr<uint64_t> RocksDbSeriesStore::ForgetEmptySeries(const StoreHandles& db) {
  uint64_t forgotten = 0;
  KeyRangeIterator it = KeyRangeIterator::Prefix(db.db, db.meta, kSeriesNamesPrefix);
  for (it.SeekToStart(); it->Valid(); it->Next()) {
    uint64_t series_id = 0;
    SeriesNames names;
    if (!ParseSeriesNamesKey(ToView(it->key()), &series_id) ||
        !DecodeSeriesNames(ToView(it->value()), &names)) {
      continue;  // damaged: left alone (reads skip what they cannot parse)
    }
    if (HasChunks(db, series_id)) continue;
    // Under the host's lock no batch of the host is being written; one written since the
    // fold may have staged points for this very series, which then stays.
    HostState* state = ReportStateOf(names.host);
    std::lock_guard<std::mutex> lock(state->mu);
    if (HasChunks(db, series_id) || StagedHolds(db, names.host, series_id)) continue;
    rocksdb::WriteBatch write;
    rocksdb::Status s =
        write.Delete(db.meta, SeriesIndexKey(names.host, names.component, names.instance));
    if (s.ok()) s = write.Delete(db.meta, it->key());
    if (s.ok()) {
      rocksdb::WriteOptions options;
      options.sync = options_.sync_writes;
      s = db.db->Write(options, &write);
    }
    if (!s.ok()) return StoreError(options_.path, "removing an expired series from the index", s);
    state->series.Erase(names.component, names.instance);
    ++forgotten;
  }
  if (!it->status().ok())
    return StoreError(options_.path, "reading the series index", it->status());
  return forgotten;
}

uint64_t RocksDbSeriesStore::ApproximateSizeBytes() {
  StoreDb::Lease db(db_.get());
  if (!db.open()) return 0;
  uint64_t total = 0;
  for (rocksdb::ColumnFamilyHandle* handle :
       {db->db->DefaultColumnFamily(), db->series, db->meta, db->staging, db->reports}) {
    uint64_t value = 0;
    if (db->db->GetIntProperty(handle, rocksdb::DB::Properties::kTotalSstFilesSize, &value)) {
      total += value;
    }
    if (db->db->GetIntProperty(handle, rocksdb::DB::Properties::kCurSizeAllMemTables, &value)) {
      total += value;
    }
  }
  rocksdb::VectorLogPtr wal_files;
  if (db->db->GetSortedWalFiles(wal_files).ok()) {
    for (const std::unique_ptr<rocksdb::LogFile>& file : wal_files) {
      if (file->Type() == rocksdb::kAliveLogFile) total += file->SizeFileBytes();
    }
  }
  return total;
}

absl::StatusOr<std::vector<GapRecord>> RocksDbSeriesStore::ReadGaps(const std::string& host) {
  std::vector<GapRecord> gaps;
  const std::string prefix = GapRecordPrefix(host);
  StoreDb::Lease db(db_.get());
  if (!db.open()) return db.ClosedError();
  KeyRangeIterator it = KeyRangeIterator::Prefix(db->db, db->meta, prefix);
  for (it.SeekToStart(); it->Valid(); it->Next()) {
    GapRecord gap;
    if (!ParseGapRecordKey(ToView(it->key()), prefix, &gap.from_sequence) ||
        !DecodeGapValue(ToView(it->value()), &gap)) {
      SkipCorrupt(fmt::format("a gap record of host {}", host));
      continue;
    }
    gaps.push_back(gap);
  }
  if (!it->status().ok()) {
    return StoreError(options_.path, fmt::format("reading gaps of host {}", host), it->status());
  }
  return gaps;
}

absl::StatusOr<uint64_t> RocksDbSeriesStore::FreeDiskBytes() {
  if (options_.free_space) return options_.free_space(options_.path);
  struct statvfs fs;
  if (statvfs(options_.path.c_str(), &fs) != 0) {
    return absl::UnavailableError(
        fmt::format("store at {}: statvfs: {}", options_.path, std::strerror(errno)));
  }
  // f_bavail, not f_bfree: the collector need not run as root, so blocks reserved for
  // root are not ours.
  return static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
}

void RocksDbSeriesStore::NoteWrite(const absl::Status& status) {
  if (status.ok() && !write_failed_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(write_error_mu_);
  write_error_ = status;
  write_failed_.store(!status.ok(), std::memory_order_relaxed);
}

absl::Status RocksDbSeriesStore::WriteState() {
  const StoreErrorListener::State errors = errors_->state();
  if (errors.stops_writes()) return StoreError(options_.path, "writes stopped", errors.error);
  if (closed_.load()) {
    return absl::UnavailableError(
        fmt::format("store at {}: closed to be reopened after a write error; the collector retries",
                    options_.path));
  }
  if (!write_failed_.load(std::memory_order_relaxed)) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(write_error_mu_);
  return write_error_;
}

absl::Status RocksDbSeriesStore::ProbeWrite() {
  StoreDb::Lease db(db_.get());
  if (!db.open()) return db.ClosedError();
  rocksdb::WriteOptions options;
  options.sync = true;
  rocksdb::Status s = db->db->Put(options, db->meta, ToSlice(kWriteProbeKey),
                                  EncodeUint64(static_cast<uint64_t>(options_.clock->NowMs())));
  absl::Status status =
      s.ok() ? absl::OkStatus() : StoreError(options_.path, "writing the recovery probe", s);
  NoteWrite(status);
  return status;
}

absl::Status RocksDbSeriesStore::Recover() {
  std::lock_guard<std::mutex> lock(recover_mu_);
  auto log = Logger("collector");
  const StoreErrorListener::State errors = errors_->state();
  const bool closed = closed_.load();
  if (errors.error.ok() && !closed) {
    // RocksDB holds nothing against the store. If the last write failed anyway, only
    // a write can tell whether writes work again; a read would say nothing.
    return write_failed_.load() ? ProbeWrite() : absl::OkStatus();
  }

  if (errors.no_space || (closed && closed_for_space_)) {
    ASSIGN_OR_RETURN(uint64_t free, FreeDiskBytes());
    if (free < options_.recovery_free_bytes) {
      return absl::ResourceExhaustedError(
          fmt::format("store at {}: {} free on its filesystem, waiting for {} before {}",
                      options_.path, FormatBytes(free), FormatBytes(options_.recovery_free_bytes),
                      closed || errors.stops_writes() ? "taking writes again"
                                                      : "resuming flushes and compactions"));
    }
  }

  if (!closed && !errors.stops_writes()) {
    // A soft error: flushes and compactions stopped, writes did not fail, so the WAL
    // writer is sound and resuming in place is safe. Cleared only if no new error came
    // meanwhile, or that one would be forgotten with background work stopped again.
    rocksdb::Status s;
    {
      StoreDb::Lease db(db_.get());
      if (!db.open()) return db.ClosedError();
      s = db->db->Resume();
    }
    if (!s.ok()) return StoreError(options_.path, "resuming flushes and compactions", s);
    errors_->ClearIfUnchanged(errors.count);
    log->info("store at {}: flushes and compactions resumed after: {}", options_.path,
              errors.error.ToString());
    return absl::OkStatus();
  }

  // Writes stopped (or the database is closed): reopen. Not DB::Resume(), see
  // store_error_listener.h.
  log->info("store at {}: reopening the database to clear: {}", options_.path,
            closed ? std::string("an earlier failed reopen") : errors.error.ToString());
  const auto start = std::chrono::steady_clock::now();
  closed_for_space_ = errors.no_space || (closed && closed_for_space_);
  absl::Status reopened = db_->Reopen(
      [this] {
        // The old database is closed: nothing it reported applies any more, and until
        // the new one is open WriteState() says closed (not OK).
        closed_.store(true);
        errors_->Clear();
        NoteWrite(absl::OkStatus());
      },
      [this](const StoreHandles& db) { return ReloadAfterReopen(db); });
  if (!reopened.ok()) return reopened;
  closed_.store(false);
  closed_for_space_ = false;
  log->info("store at {}: reopened in {} ms", options_.path,
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count());
  // The disk may still be too full for anything but opening: prove a write goes through
  // rather than report a store that fails its next batch.
  return ProbeWrite();
}

}  // namespace drip::collector
