// AtomicFile: writes a file so that a reader sees either what was there before or the
// whole new contents, never half of them, and a failed or interrupted write leaves the
// old file as it was. The contents go to a temporary file beside the target
// (PATH.tmp.PID, same filesystem), are flushed to disk, and are renamed over the target.
// Used for every file Drip writes for others to read: the ready file, snapshots, reports.
//
// Not thread-safe; one writer per object.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace drip {

class AtomicFile {
 public:
  // Creates the temporary file now, so that a path that cannot be written fails before
  // a long computation rather than after it. Errors name the path: NotFound for a
  // missing directory, PermissionDenied, Internal otherwise.
  static absl::StatusOr<AtomicFile> Create(const std::string& path);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // Removes the temporary file unless Commit() succeeded.
  ~AtomicFile();

  // Writes `contents`, flushes them to disk and renames the file into place. Call once.
  absl::Status Commit(std::string_view contents);

 private:
  AtomicFile(std::string path, std::string tmp, int fd);
  void Discard();

  std::string path_;
  std::string tmp_;  // set while the temporary file exists
  int fd_ = -1;
};

// AtomicFile::Create(path) and Commit(contents) in one call.
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace drip
