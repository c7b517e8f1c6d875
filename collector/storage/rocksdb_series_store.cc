#include "collector/storage/rocksdb_series_store.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "collector/storage/chunk_codec.h"
#include "collector/storage/chunk_merge_operator.h"
#include "collector/storage/retention_filter.h"
#include "collector/storage/rocksdb_tuning.h"
#include "collector/storage/series_key.h"
#include "collector/storage/staged_batch.h"
#include "collector/storage/staging_folder.h"
#include "collector/storage/store_error.h"
#include "common/duration.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "rocksdb/db.h"
#include "rocksdb/transaction_log.h"
#include "rocksdb/write_batch.h"

namespace drip::collector {
namespace {

// A staged process sample: series id, window and point. Reserving this up front keeps
// a batch's encoding to one allocation.
constexpr size_t kStagedBytesPerSample = 32;

// The smallest key greater than every key that starts with `prefix`, for
// iterate_upper_bound. Meta prefixes never end in 0xff bytes only, so the loop ends.
std::string PrefixSuccessor(std::string prefix) {
  while (!prefix.empty()) {
    unsigned char last = static_cast<unsigned char>(prefix.back());
    if (last != 0xff) {
      prefix.back() = static_cast<char>(last + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return prefix;
}

}  // namespace

RocksDbSeriesStore::RocksDbSeriesStore(const RocksDbSeriesStoreOptions& options)
    : options_(options),
      chunk_window_ms_(options.chunk_window.count()),
      retention_(
          std::make_shared<RetentionFilterFactory>(options.clock, options.retention.count())) {}

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
  RETURN_IF_ERROR(store->LoadStoreSettings());
  store->reports_ = std::make_unique<RocksDbReportStore>(store->db_.get(), store->reports_cf_,
                                                         options.path, options.sync_writes);
  RETURN_IF_ERROR(store->reports_->Init());
  StagingFolderOptions fold;
  fold.path = options.path;
  fold.interval = options.fold_interval;
  fold.fold_bytes = options.fold_bytes;
  store->folder_ = std::make_unique<StagingFolder>(store->db_.get(), store->staging_cf_,
                                                   store->series_cf_, fold);
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
  rocksdb::DB* db = nullptr;
  rocksdb::DBOptions db_options = StoreDbOptions();
  if (options_.env != nullptr) db_options.env = options_.env;
  rocksdb::Status s = rocksdb::DB::Open(db_options, options_.path, families, &handles_, &db);
  if (!s.ok()) return StoreError(options_.path, "cannot open", s);
  db_.reset(db);
  series_cf_ = handles_[1];
  meta_cf_ = handles_[2];
  staging_cf_ = handles_[3];
  reports_cf_ = handles_[4];
  return absl::OkStatus();
}

absl::Status RocksDbSeriesStore::LoadStoreSettings() {
  const rocksdb::ReadOptions read;
  std::string value;

  // The chunk window is part of the layout: keep the one the store was created with.
  rocksdb::Status s = db_->Get(read, meta_cf_, ToSlice(kChunkWindowKey), &value);
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
    s = db_->Put(write, meta_cf_, ToSlice(kChunkWindowKey),
                 EncodeUint64(static_cast<uint64_t>(chunk_window_ms_)));
    if (!s.ok()) return StoreError(options_.path, "recording the chunk window", s);
  } else {
    return StoreError(options_.path, "reading the chunk window", s);
  }
  retention_->set_chunk_window_ms(chunk_window_ms_);

  // Concurrent batches persist the id counter in whatever order their writes land, so
  // the stored counter may lag; every allocated id that became durable has its "i/"
  // entry in the same write, so the highest one settles it.
  uint64_t next_id = 1;
  s = db_->Get(read, meta_cf_, ToSlice(kNextSeriesIdKey), &value);
  if (s.ok()) {
    if (!DecodeUint64(value, &next_id)) {
      return absl::DataLossError(
          fmt::format("store at {}: stored series id counter is corrupt", options_.path));
    }
  } else if (!s.IsNotFound()) {
    return StoreError(options_.path, "reading the series id counter", s);
  }
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, meta_cf_));
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
  next_series_id_ = std::max<uint64_t>(next_id, 1);

  s = db_->Get(read, meta_cf_, ToSlice(kRetentionCutoffKey), &value);
  if (s.ok()) {
    uint64_t cutoff = 0;
    if (DecodeUint64(value, &cutoff)) compacted_cutoff_ms_ = static_cast<int64_t>(cutoff);
  } else if (!s.IsNotFound()) {
    return StoreError(options_.path, "reading the retention state", s);
  }
  return absl::OkStatus();
}

RocksDbSeriesStore::~RocksDbSeriesStore() {
  if (folder_ != nullptr) folder_->Stop();
  folder_.reset();
  reports_.reset();
  if (db_ == nullptr) return;
  auto log = Logger("collector");
  if (!options_.sync_writes) {
    rocksdb::Status s = db_->SyncWAL();
    if (!s.ok()) {
      log->error("store at {}: syncing the WAL on close: {}", options_.path, s.ToString());
    }
  }
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    rocksdb::Status s = db_->DestroyColumnFamilyHandle(handle);
    if (!s.ok()) log->warn("store at {}: closing a column family: {}", options_.path, s.ToString());
  }
  rocksdb::Status s = db_->Close();
  if (!s.ok()) log->error("store at {}: closing: {}", options_.path, s.ToString());
}

HostState* RocksDbSeriesStore::StateOf(const std::string& host) {
  std::lock_guard<std::mutex> lock(hosts_mu_);
  std::unique_ptr<HostState>& state = hosts_[host];
  if (state == nullptr) state = std::make_unique<HostState>();
  return state.get();
}

absl::Status RocksDbSeriesStore::LoadHostLocked(const std::string& host, HostState* state) {
  if (state->loaded) return absl::OkStatus();
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), meta_cf_, HostRecordKey(host), &value);
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
    const std::string& host, HostState* state, const drip::v1::Sample& sample,
    rocksdb::WriteBatch* batch, std::vector<const drip::v1::Sample*>* new_series,
    uint64_t* next_series_id) {
  if (std::optional<uint64_t> id = state->series.Find(sample.component(), sample.instance())) {
    return *id;
  }
  const std::string index_key = SeriesIndexKey(host, sample.component(), sample.instance());
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), meta_cf_, index_key, &value);
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
  rocksdb::Status put = batch->Put(meta_cf_, index_key, EncodeUint64(id));
  if (put.ok()) {
    put = batch->Put(meta_cf_, SeriesNamesKey(id),
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
  if (host.empty()) return absl::InvalidArgumentError("AppendBatch: host is empty");
  HostState* state = StateOf(host);
  std::lock_guard<std::mutex> lock(state->mu);
  RETURN_IF_ERROR(LoadHostLocked(host, state));

  AppendResult result;
  const uint64_t mark = state->record.acked_sequence();
  const uint64_t sequence = batch.sequence();
  if (sequence <= mark) return result;  // a resend of something durable

  // Every sequence between the mark and this batch is lost for good (a later batch at
  // or below the new mark would be taken for a resend). With no mark yet, only the
  // agent can say where its drops began.
  const uint64_t gap_from = mark != 0 ? mark + 1 : batch.first_dropped_sequence();
  if (gap_from != 0 && gap_from < sequence) result.missing_batches = sequence - gap_from;

  const int64_t now_ms = options_.clock->NowMs();
  // Only between batches: a batch's new ids must stay cached until its write is done.
  state->series.TrimIfFull();

  // The samples go in as one staged value (staged_batch.h); the folder moves them into
  // their chunks later, many batches at a time.
  rocksdb::WriteBatch write;
  std::vector<const drip::v1::Sample*> new_series;
  uint64_t next_series_id = 0;
  std::string staged;
  staged.reserve(static_cast<size_t>(batch.samples_size()) * kStagedBytesPerSample + 1);
  StagedBatchWriter staged_writer(&staged);
  absl::Status status;
  for (const drip::v1::Sample& sample : batch.samples()) {
    absl::StatusOr<uint64_t> id =
        SeriesIdLocked(host, state, sample, &write, &new_series, &next_series_id);
    if (!id.ok()) {
      status = id.status();
      break;
    }
    staged_writer.Append(*id, WindowStart(sample.timestamp_ms(), chunk_window_ms_), sample);
  }
  if (status.ok() && batch.samples_size() > 0) {
    rocksdb::Status s = write.Put(staging_cf_, StagingKey(host, sequence), staged);
    if (!s.ok()) status = StoreError(options_.path, "building a batch", s);
  }

  drip::v1::HostInfo record = state->record;
  if (status.ok()) {
    if (!state->exists) record.set_first_seen_ms(now_ms);
    record.set_host(host);
    record.set_connected(false);
    record.set_acked_sequence(sequence);
    record.set_samples_stored(record.samples_stored() +
                              static_cast<uint64_t>(batch.samples_size()));
    record.set_gaps(record.gaps() + result.missing_batches);
    record.set_last_seen_ms(std::max(record.last_seen_ms(), now_ms));
    rocksdb::Status s = write.Put(meta_cf_, HostRecordKey(host), record.SerializeAsString());
    if (s.ok() && next_series_id != 0) {
      s = write.Put(meta_cf_, ToSlice(kNextSeriesIdKey), EncodeUint64(next_series_id));
    }
    if (s.ok() && result.missing_batches > 0) {
      GapRecord gap{gap_from, sequence, now_ms};
      s = write.Put(meta_cf_, GapRecordKey(host, gap_from), EncodeGapValue(gap));
    }
    if (!s.ok()) status = StoreError(options_.path, "building a batch", s);
  }
  if (status.ok()) {
    rocksdb::WriteOptions options;
    options.sync = options_.sync_writes;
    rocksdb::Status s = db_->Write(options, &write);
    if (!s.ok()) {
      status =
          StoreError(options_.path, fmt::format("writing batch {} of host {}", sequence, host), s);
    }
  }
  if (!status.ok()) {
    for (const drip::v1::Sample* sample : new_series) {
      state->series.Erase(sample->component(), sample->instance());
    }
    // A failed write may still have reached the WAL (a sync that failed after the
    // write): read the mark back from the store next time instead of trusting memory.
    state->loaded = false;
    return status;
  }

  state->record = std::move(record);
  state->exists = true;
  if (batch.samples_size() > 0) folder_->NoteStaged(staged.size());
  result.stored = true;
  result.samples_stored = static_cast<uint64_t>(batch.samples_size());
  return result;
}

absl::StatusOr<uint64_t> RocksDbSeriesStore::AckedSequence(const std::string& host) {
  HostState* state = StateOf(host);
  std::lock_guard<std::mutex> lock(state->mu);
  RETURN_IF_ERROR(LoadHostLocked(host, state));
  return state->record.acked_sequence();
}

absl::Status RocksDbSeriesStore::PutHost(const drip::v1::HostInfo& info) {
  if (info.host().empty()) return absl::InvalidArgumentError("PutHost: host is empty");
  HostState* state = StateOf(info.host());
  std::lock_guard<std::mutex> lock(state->mu);
  RETURN_IF_ERROR(LoadHostLocked(info.host(), state));

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
      db_->Put(options, meta_cf_, HostRecordKey(info.host()), record.SerializeAsString());
  if (!s.ok()) {
    state->loaded = false;
    return StoreError(options_.path, fmt::format("writing host {}", info.host()), s);
  }
  state->record = std::move(record);
  state->exists = true;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<drip::v1::HostInfo>> RocksDbSeriesStore::ListHosts() {
  std::vector<drip::v1::HostInfo> hosts;
  const std::string upper = PrefixSuccessor(std::string(kHostRecordPrefix));
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read;
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, meta_cf_));
  for (it->Seek(ToSlice(kHostRecordPrefix)); it->Valid(); it->Next()) {
    drip::v1::HostInfo& info = hosts.emplace_back();
    if (!info.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      // One damaged record must not hide the fleet from `dripctl hosts`.
      Logger("collector")
          ->error("store at {}: skipping the corrupt record of host {}", options_.path,
                  ToView(it->key()).substr(kHostRecordPrefix.size()));
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
  const std::string upper = PrefixSuccessor(prefix);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read;
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, meta_cf_));
  std::vector<std::string> components;
  std::string component;
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    if (!ParseSeriesIndexComponent(ToView(it->key()), prefix, &component)) {
      return absl::DataLossError(
          fmt::format("store at {}: corrupt series index entry of host {}", options_.path, host));
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
    const std::string& host, const std::string& component, int64_t since_ms, int64_t until_ms) {
  // Expired samples stay invisible even before compaction has dropped their chunk.
  const int64_t since = std::max(since_ms, retention_->CutoffMs());
  const int64_t until = until_ms == 0 ? INT64_MAX : until_ms;
  std::vector<drip::v1::Series> result;
  if (since >= until) return result;

  // One snapshot, so that the index and the chunks are seen at the same instant.
  const rocksdb::Snapshot* snapshot = db_->GetSnapshot();
  struct SnapshotReleaser {
    rocksdb::DB* db;
    const rocksdb::Snapshot* snapshot;
    ~SnapshotReleaser() { db->ReleaseSnapshot(snapshot); }
  } releaser{db_.get(), snapshot};

  struct Instance {
    std::string name;
    uint64_t series_id;
  };
  std::vector<Instance> instances;
  {
    const std::string prefix = SeriesIndexPrefix(host, component);
    const std::string upper = PrefixSuccessor(prefix);
    const rocksdb::Slice upper_slice(upper);
    rocksdb::ReadOptions read;
    read.snapshot = snapshot;
    read.iterate_upper_bound = &upper_slice;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, meta_cf_));
    for (it->Seek(prefix); it->Valid(); it->Next()) {
      Instance instance;
      if (!ParseSeriesIndexInstance(ToView(it->key()), prefix, &instance.name) ||
          !DecodeUint64(ToView(it->value()), &instance.series_id)) {
        return absl::DataLossError(
            fmt::format("store at {}: corrupt series index entry under host {} component {}",
                        options_.path, host, component));
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
    const std::string lower = ChunkKey(instance.series_id, WindowStart(since, chunk_window_ms_));
    // Chunks starting at or after `until` hold nothing before it.
    const std::string upper = until == INT64_MAX ? ChunkKey(instance.series_id + 1, INT64_MIN)
                                                 : ChunkKey(instance.series_id, until);
    const rocksdb::Slice upper_slice(upper);
    rocksdb::ReadOptions read;
    read.snapshot = snapshot;
    read.iterate_upper_bound = &upper_slice;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, series_cf_));
    for (it->Seek(lower); it->Valid(); it->Next()) {
      uint64_t series_id = 0;
      int64_t window_start = 0;
      if (!ParseChunkKey(ToView(it->key()), &series_id, &window_start)) continue;
      absl::Status decoded = DecodeChunk(ToView(it->value()), window_start, &samples[i]);
      if (!decoded.ok()) {
        log_damage(fmt::format("chunk of instance {} at {}", instance.name, window_start), decoded);
      }
    }
    if (!it->status().ok()) {
      return StoreError(options_.path,
                        fmt::format("reading series {} {} {}", host, component, instance.name),
                        it->status());
    }
  }
  if (!instances.empty()) {
    const std::string prefix = StagingPrefix(host);
    const std::string upper = PrefixSuccessor(prefix);
    const rocksdb::Slice upper_slice(upper);
    rocksdb::ReadOptions read;
    read.snapshot = snapshot;
    read.iterate_upper_bound = &upper_slice;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, staging_cf_));
    for (it->Seek(prefix); it->Valid(); it->Next()) {
      StagedBatchReader reader(ToView(it->value()));
      StagedPoint point;
      while (reader.Next(&point)) {
        auto found = instance_of.find(point.series_id);
        if (found == instance_of.end()) continue;
        absl::Status decoded =
            DecodeChunk(point.point, point.window_start_ms, &samples[found->second]);
        if (!decoded.ok()) log_damage("a staged point", decoded);
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
  const int64_t slack = std::max<int64_t>(chunk_window_ms_, options_.retention.count() / 8);
  const bool due = compacted_cutoff_ms_ == INT64_MIN ||
                   (cutoff > compacted_cutoff_ms_ && cutoff - compacted_cutoff_ms_ >= slack);
  if (due) {
    rocksdb::CompactRangeOptions compact;
    // Ingest keeps its background compactions meanwhile; this one only adds work.
    compact.exclusive_manual_compaction = false;
    // The default (kIfHaveCompactionFilter) already rewrites the bottom level, where
    // the oldest chunks are.
    rocksdb::Status s = db_->CompactRange(compact, series_cf_, nullptr, nullptr);
    if (!s.ok()) return StoreError(options_.path, "retention compaction", s);
    rocksdb::WriteOptions options;
    options.sync = options_.sync_writes;
    s = db_->Put(options, meta_cf_, ToSlice(kRetentionCutoffKey),
                 EncodeUint64(static_cast<uint64_t>(cutoff)));
    if (!s.ok()) return StoreError(options_.path, "recording the retention state", s);
    compacted_cutoff_ms_ = cutoff;
  }
  return retention_->TakeDroppedChunks();
}

uint64_t RocksDbSeriesStore::ApproximateSizeBytes() {
  uint64_t total = 0;
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    uint64_t value = 0;
    if (db_->GetIntProperty(handle, rocksdb::DB::Properties::kTotalSstFilesSize, &value)) {
      total += value;
    }
    if (db_->GetIntProperty(handle, rocksdb::DB::Properties::kCurSizeAllMemTables, &value)) {
      total += value;
    }
  }
  rocksdb::VectorLogPtr wal_files;
  if (db_->GetSortedWalFiles(wal_files).ok()) {
    for (const std::unique_ptr<rocksdb::LogFile>& file : wal_files) {
      if (file->Type() == rocksdb::kAliveLogFile) total += file->SizeFileBytes();
    }
  }
  return total;
}

absl::StatusOr<std::vector<GapRecord>> RocksDbSeriesStore::ReadGaps(const std::string& host) {
  std::vector<GapRecord> gaps;
  const std::string prefix = GapRecordPrefix(host);
  const std::string upper = PrefixSuccessor(prefix);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read;
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, meta_cf_));
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    GapRecord gap;
    if (!ParseGapRecordKey(ToView(it->key()), prefix, &gap.from_sequence) ||
        !DecodeGapValue(ToView(it->value()), &gap)) {
      return absl::DataLossError(
          fmt::format("store at {}: corrupt gap record of host {}", options_.path, host));
    }
    gaps.push_back(gap);
  }
  if (!it->status().ok()) {
    return StoreError(options_.path, fmt::format("reading gaps of host {}", host), it->status());
  }
  return gaps;
}

}  // namespace drip::collector
