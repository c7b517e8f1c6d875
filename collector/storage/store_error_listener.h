// StoreErrorListener: RocksDB's background errors, remembered so that the store can
// tell whether it takes writes without trying one.
//
// After a failed WAL write, memtable flush or compaction RocksDB records a "background
// error". From severity hard upwards every later write fails with it (the database is
// read-only; reads still work) until the error is cleared; a soft error (a compaction
// that ran out of space) stops flushes and compactions but not writes, until memtables
// fill up. This listener keeps the worst error since the last Clear().
//
// It also switches RocksDB's own recovery off (the SstFileManager's polling for free
// space, the retry thread for retryable I/O errors). Both resume the database in place,
// and in RocksDB 7.8 a resume that has no memtable to flush keeps the WAL writer whose
// append failed: the next write then aborts the process in Debian's build, which has
// assertions on (WritableFileWriter asserts no write follows an error), or fails for
// ever in a build without them. RocksDbSeriesStore::Recover reopens the database
// instead; docs/storage.md ("Write errors and recovery") has the details.
//
// Thread-safe: RocksDB calls it from its write and background threads.
#pragma once

#include <cstdint>
#include <mutex>

#include "rocksdb/listener.h"
#include "rocksdb/status.h"

namespace drip::collector {

class StoreErrorListener final : public rocksdb::EventListener {
 public:
  struct State {
    rocksdb::Status error;  // the worst since Clear(); OK when none
    // Any error since Clear() was a full disk (or a space limit): recovering needs room.
    bool no_space = false;
    uint64_t count = 0;  // background errors since this listener was made; never cleared

    rocksdb::Status::Severity severity() const { return error.severity(); }
    // Writes fail until the error is cleared.
    bool stops_writes() const {
      return !error.ok() && error.severity() >= rocksdb::Status::Severity::kHardError;
    }
  };

  State state() const;
  // After a reopen: the database the errors came from is gone.
  void Clear();
  // After an in-place resume: clears unless an error came after the state() whose count
  // is `count`, which the resume did not deal with.
  void ClearIfUnchanged(uint64_t count);

  const char* Name() const override { return "DripStoreErrorListener"; }
  void OnBackgroundError(rocksdb::BackgroundErrorReason reason, rocksdb::Status* error) override;
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason reason, rocksdb::Status error,
                            bool* auto_recovery) override;

 private:
  mutable std::mutex mu_;
  State state_;  // guarded by mu_
};

}  // namespace drip::collector
