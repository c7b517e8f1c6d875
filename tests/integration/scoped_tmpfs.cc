#include "tests/integration/scoped_tmpfs.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "fmt/format.h"

namespace drip::testing {

absl::StatusOr<std::unique_ptr<ScopedTmpfs>> ScopedTmpfs::Mount(const std::string& dir,
                                                                uint64_t size_bytes) {
  const std::string options = fmt::format("size={},mode=0755", size_bytes);
  if (mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    return absl::FailedPreconditionError(
        fmt::format("mount -t tmpfs -o {} on {}: {}", options, dir, std::strerror(errno)));
  }
  return std::unique_ptr<ScopedTmpfs>(new ScopedTmpfs(dir));
}

ScopedTmpfs::~ScopedTmpfs() {
  // Busy if a child the test started still has a file open: detach now, and the kernel
  // frees the tmpfs when the last one closes.
  if (umount2(dir_.c_str(), 0) != 0) umount2(dir_.c_str(), MNT_DETACH);
}

absl::StatusOr<uint64_t> ScopedTmpfs::FillWith(const std::string& name) {
  const std::string path = dir_ + "/" + name;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(fmt::format("{}: {}", path, std::strerror(errno)));
  uint64_t written = 0;
  // Big writes first, then ever smaller ones, so that not even a page is left over.
  std::vector<char> block(1 << 20, 'x');
  for (size_t size = block.size(); size > 0; size /= 2) {
    while (true) {
      ssize_t n = write(fd, block.data(), size);
      if (n <= 0) break;
      written += static_cast<uint64_t>(n);
    }
  }
  const int error = errno;
  close(fd);
  if (error != ENOSPC) {
    return absl::InternalError(
        fmt::format("{}: stopped before ENOSPC: {}", path, std::strerror(error)));
  }
  return written;
}

void ScopedTmpfs::RemoveFile(const std::string& name) { unlink((dir_ + "/" + name).c_str()); }

uint64_t ScopedTmpfs::FreeBytes() const {
  struct statvfs fs;
  if (statvfs(dir_.c_str(), &fs) != 0) return 0;
  return static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
}

}  // namespace drip::testing
