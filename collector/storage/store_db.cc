#include "collector/storage/store_db.h"

#include <utility>

#include "collector/storage/store_error.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"

namespace drip::collector {

StoreDb::StoreDb(std::string path, rocksdb::DBOptions options,
                 std::vector<rocksdb::ColumnFamilyDescriptor> families)
    : path_(std::move(path)), options_(std::move(options)), families_(std::move(families)) {}

StoreDb::~StoreDb() { Close(false); }

absl::Status StoreDb::Open() {
  absl::MutexLock lock(&mu_);
  return OpenLocked();
}

absl::Status StoreDb::Reopen(const std::function<void()>& after_close,
                             const std::function<absl::Status(const StoreHandles&)>& after_open) {
  absl::MutexLock lock(&mu_);
  // A clean close: RocksDB flushes what only the memtables hold (the unlogged folds) if
  // it still can, and otherwise the WAL has every acknowledged write anyway.
  CloseLocked(false);
  after_close();
  absl::Status opened = OpenLocked();
  if (opened.ok()) opened = after_open(current_);
  if (!opened.ok()) CloseLocked(false);
  return opened;
}

void StoreDb::Close(bool sync_wal) {
  absl::MutexLock lock(&mu_);
  CloseLocked(sync_wal);
}

absl::Status StoreDb::OpenLocked() {
  if (db_ != nullptr) return absl::OkStatus();
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::Status s = rocksdb::DB::Open(options_, path_, families_, &handles, &db);
  if (!s.ok()) return StoreError(path_, "cannot open", s);
  db_.reset(db);
  handles_ = std::move(handles);
  current_ = StoreHandles{db_.get(), handles_[1], handles_[2], handles_[3], handles_[4]};
  return absl::OkStatus();
}

void StoreDb::CloseLocked(bool sync_wal) {
  if (db_ == nullptr) return;
  auto log = Logger("collector");
  if (sync_wal) {
    rocksdb::Status s = db_->SyncWAL();
    if (!s.ok()) log->error("store at {}: syncing the WAL on close: {}", path_, s.ToString());
  }
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    rocksdb::Status s = db_->DestroyColumnFamilyHandle(handle);
    if (!s.ok()) log->warn("store at {}: closing a column family: {}", path_, s.ToString());
  }
  handles_.clear();
  // After a write error closing reports that error again (the WAL's last buffer cannot
  // be written); what matters was logged when it happened.
  rocksdb::Status s = db_->Close();
  if (!s.ok()) log->warn("store at {}: closing: {}", path_, s.ToString());
  db_.reset();
  current_ = StoreHandles{};
}

StoreDb::Lease::Lease(StoreDb* store) : store_(store) {
  store_->mu_.ReaderLock();
  handles_ = store_->current_;
}

StoreDb::Lease::~Lease() { store_->mu_.ReaderUnlock(); }

absl::Status StoreDb::Lease::ClosedError() const {
  return absl::UnavailableError(fmt::format(
      "store at {}: closed after a failed reopen; the collector retries", store_->path_));
}

}  // namespace drip::collector
