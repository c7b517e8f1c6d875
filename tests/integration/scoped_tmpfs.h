// ScopedTmpfs: a small tmpfs mounted on a test's directory, so that a test can fill a
// real filesystem (ENOSPC from the kernel, not a fake) without touching the machine's
// disks. The destructor unmounts it, lazily if a process still has files open there,
// so every exit path of the test leaves no mount behind. Needs CAP_SYS_ADMIN; Mount()
// says why when the kernel or a sandbox refuses, and the test skips with that reason.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace drip::testing {

class ScopedTmpfs {
 public:
  // Mounts a tmpfs of `size_bytes` on the existing, empty directory `dir`.
  static absl::StatusOr<std::unique_ptr<ScopedTmpfs>> Mount(const std::string& dir,
                                                            uint64_t size_bytes);
  ~ScopedTmpfs();
  ScopedTmpfs(const ScopedTmpfs&) = delete;
  ScopedTmpfs& operator=(const ScopedTmpfs&) = delete;

  const std::string& dir() const { return dir_; }

  // Writes `name` in the mount until the filesystem is full (ENOSPC); returns the bytes
  // written. The file stays until RemoveFile().
  absl::StatusOr<uint64_t> FillWith(const std::string& name);
  void RemoveFile(const std::string& name);
  // Bytes available (statvfs), or 0 when it cannot be read.
  uint64_t FreeBytes() const;

 private:
  explicit ScopedTmpfs(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace drip::testing
