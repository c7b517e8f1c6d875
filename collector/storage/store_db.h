// StoreDb: the collector's open RocksDB database and its column families, behind a
// reader/writer lock so that the database can be closed and reopened underneath the
// series store, the report store and the staging folder while they keep running.
//
// Every use of the database holds a Lease (shared) for its duration; Reopen() waits for
// the leases in flight, holds new ones back (absl::Mutex favours the writer, so a steady
// stream of leases cannot starve it), closes the database and opens it again. Why a
// reopen at all: after a failed write RocksDB 7.8 cannot be resumed in place safely
// (store_error_listener.h), and a fresh open also clears errors DB::Resume() refuses
// (fatal severities).
//
// A lease must not be taken while the same thread holds one: with Reopen() waiting, the
// second would wait for the writer and the writer for the first.
//
// Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"

namespace drip::collector {

// The open database and the store's column families (rocksdb_tuning.h names them).
struct StoreHandles {
  rocksdb::DB* db = nullptr;
  rocksdb::ColumnFamilyHandle* series = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  rocksdb::ColumnFamilyHandle* staging = nullptr;
  rocksdb::ColumnFamilyHandle* reports = nullptr;
};

class StoreDb {
 public:
  // `families` must be default, series, meta, staging, reports, in that order.
  StoreDb(std::string path, rocksdb::DBOptions options,
          std::vector<rocksdb::ColumnFamilyDescriptor> families);
  // Close(false).
  ~StoreDb();

  StoreDb(const StoreDb&) = delete;
  StoreDb& operator=(const StoreDb&) = delete;

  // Opens the database (creating it when missing). Call once, before any lease.
  absl::Status Open();

  // Closes the database once no lease is held and opens it again. `after_close` runs
  // between the two (no RocksDB callback can come from the old database any more, none
  // yet from the new one); `after_open` runs before any new lease is granted, to reload
  // what callers keep in memory. When the open (or `after_open`) fails the database
  // stays closed: leases see open() false until a later Reopen() succeeds.
  absl::Status Reopen(const std::function<void()>& after_close,
                      const std::function<absl::Status(const StoreHandles&)>& after_open);

  // Closes the database (idempotent); syncs the WAL first when `sync_wal`.
  void Close(bool sync_wal);

  const std::string& path() const { return path_; }

  // Shared hold on the database for one operation.
  class ABSL_SCOPED_LOCKABLE Lease {
   public:
    explicit Lease(StoreDb* store) ABSL_SHARED_LOCK_FUNCTION(store->mu_);
    ~Lease() ABSL_UNLOCK_FUNCTION();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    // False after a failed Reopen(): the handles are null.
    bool open() const { return handles_.db != nullptr; }
    // Unavailable, naming the store, for callers to return when !open().
    absl::Status ClosedError() const;
    const StoreHandles& operator*() const { return handles_; }
    const StoreHandles* operator->() const { return &handles_; }

   private:
    StoreDb* store_;
    StoreHandles handles_;
  };

 private:
  absl::Status OpenLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CloseLocked(bool sync_wal) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  const rocksdb::DBOptions options_;
  const std::vector<rocksdb::ColumnFamilyDescriptor> families_;

  absl::Mutex mu_;
  std::unique_ptr<rocksdb::DB> db_ ABSL_GUARDED_BY(mu_);
  std::vector<rocksdb::ColumnFamilyHandle*> handles_ ABSL_GUARDED_BY(mu_);  // owned
  StoreHandles current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace drip::collector
