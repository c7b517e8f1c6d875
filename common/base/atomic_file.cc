#include "common/base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "fmt/format.h"

namespace drip {
namespace {

absl::Status ErrnoStatus(int error, const std::string& path, std::string_view what) {
  std::string message = fmt::format("{}: {}: {}", path, what, std::strerror(error));
  if (error == ENOENT || error == ENOTDIR) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM || error == EROFS) {
    return absl::PermissionDeniedError(message);
  }
  return absl::InternalError(message);
}

}  // namespace

absl::StatusOr<AtomicFile> AtomicFile::Create(const std::string& path) {
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, path, "cannot write");
  return AtomicFile(path, std::move(tmp), fd);
}

AtomicFile::AtomicFile(std::string path, std::string tmp, int fd)
    : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd) {}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      tmp_(std::exchange(other.tmp_, std::string())),
      fd_(std::exchange(other.fd_, -1)) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    Discard();
    path_ = std::move(other.path_);
    tmp_ = std::exchange(other.tmp_, std::string());
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

AtomicFile::~AtomicFile() { Discard(); }

void AtomicFile::Discard() {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  if (!tmp_.empty()) ::unlink(std::exchange(tmp_, std::string()).c_str());
}

absl::Status AtomicFile::Commit(std::string_view contents) {
  if (fd_ < 0) return absl::FailedPreconditionError(fmt::format("{}: already written", path_));
  while (!contents.empty()) {
    const ssize_t n = ::write(fd_, contents.data(), contents.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, path_, "cannot write");
    }
    contents.remove_prefix(static_cast<size_t>(n));
  }
  // Flushed before the rename: after a crash the new name must not point at a file whose
  // blocks never reached the disk.
  if (::fsync(fd_) != 0) return ErrnoStatus(errno, path_, "cannot write");
  if (::close(std::exchange(fd_, -1)) != 0) return ErrnoStatus(errno, path_, "cannot write");
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    return ErrnoStatus(errno, path_, "cannot move into place");
  }
  tmp_.clear();
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  absl::StatusOr<AtomicFile> file = AtomicFile::Create(path);
  if (!file.ok()) return file.status();
  return file->Commit(contents);
}

}  // namespace drip
