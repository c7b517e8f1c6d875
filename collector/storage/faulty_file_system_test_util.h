// FaultyFileSystem: RocksDB's file system with appends that fail on command, as a full
// disk or a failing device does, for the store's write-error tests (no mount needed).
// A failing append first writes half of its data, as a write(2) cut short by ENOSPC
// does, so the WAL is left with a torn record the way a real full disk leaves it.
// Test-only; thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "rocksdb/env.h"
#include "rocksdb/file_system.h"

namespace drip::collector {

class FaultyFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  // Which files fail (a bit set).
  enum Files : unsigned {
    kNone = 0,
    kWal = 1,       // *.log
    kTable = 2,     // *.sst
    kManifest = 4,  // MANIFEST-*
    kOther = 8,     // OPTIONS, CURRENT, ...
    kAll = 15,
  };

  FaultyFileSystem() : rocksdb::FileSystemWrapper(rocksdb::FileSystem::Default()) {}

  const char* Name() const override { return "DripFaultyFileSystem"; }

  // From now on appends to `files` fail with `error` (NoSpace by default); kNone heals.
  void FailAppends(unsigned files, rocksdb::IOStatus error = rocksdb::IOStatus::NoSpace(
                                       "injected", "No space left on device")) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::move(error);
    }
    failing_ = files;
  }
  // Appends failed so far.
  int failures() const { return failures_.load(); }

  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->NewWritableFile(name, options, result, dbg);
    if (s.ok()) Wrap(name, result);
    return s;
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->ReopenWritableFile(name, options, result, dbg);
    if (s.ok()) Wrap(name, result);
    return s;
  }
  rocksdb::IOStatus ReuseWritableFile(const std::string& name, const std::string& old_name,
                                      const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSWritableFile>* result,
                                      rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->ReuseWritableFile(name, old_name, options, result, dbg);
    if (s.ok()) Wrap(name, result);
    return s;
  }

 private:
  class File final : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> file, FaultyFileSystem* fs, unsigned kind)
        : rocksdb::FSWritableFileOwnerWrapper(std::move(file)), fs_(fs), kind_(kind) {}

    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
      if (!fs_->Fails(kind_)) return target()->Append(data, options, dbg);
      rocksdb::IOStatus partial =
          target()->Append(rocksdb::Slice(data.data(), data.size() / 2), options, dbg);
      partial.PermitUncheckedError();
      return fs_->Failure();
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             const rocksdb::DataVerificationInfo& /*info*/,
                             rocksdb::IODebugContext* dbg) override {
      return Append(data, options, dbg);
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                       const rocksdb::IOOptions& options,
                                       rocksdb::IODebugContext* dbg) override {
      if (fs_->Fails(kind_)) return fs_->Failure();
      return target()->PositionedAppend(data, offset, options, dbg);
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                       const rocksdb::IOOptions& options,
                                       const rocksdb::DataVerificationInfo& /*info*/,
                                       rocksdb::IODebugContext* dbg) override {
      return PositionedAppend(data, offset, options, dbg);
    }

   private:
    FaultyFileSystem* fs_;
    unsigned kind_;
  };

  static unsigned KindOf(const std::string& name) {
    const std::string base = name.substr(name.find_last_of('/') + 1);
    auto ends_with = [&](const std::string& suffix) {
      return base.size() >= suffix.size() &&
             base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with(".log")) return kWal;
    if (ends_with(".sst")) return kTable;
    if (base.rfind("MANIFEST-", 0) == 0) return kManifest;
    return kOther;
  }

  void Wrap(const std::string& name, std::unique_ptr<rocksdb::FSWritableFile>* file) {
    *file = std::make_unique<File>(std::move(*file), this, KindOf(name));
  }

  bool Fails(unsigned kind) const { return (failing_.load() & kind) != 0; }
  rocksdb::IOStatus Failure() {
    ++failures_;
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

  std::atomic<unsigned> failing_{kNone};
  std::atomic<int> failures_{0};
  std::mutex mu_;
  rocksdb::IOStatus error_;  // guarded by mu_
};

}  // namespace drip::collector
