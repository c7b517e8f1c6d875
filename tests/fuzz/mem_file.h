// MemFile: fuzz bytes as a file, for entry points that take a path (SampleCsvReader's
// ReadFile, dripctl's config loaders) so that their own reading code is fuzzed too. An
// anonymous memfd named by its /proc/self/fd path: no disk I/O, nothing left behind.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace drip::fuzz {

class MemFile {
 public:
  explicit MemFile(std::string_view bytes) : fd_(::memfd_create("drip-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) Die("memfd_create");
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n <= 0) Die("write");
      done += static_cast<size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  // Opening it reads from the start, whatever the offset of fd_.
  const std::string& path() const { return path_; }

 private:
  // The harness, not the code under test, failed: no point going on.
  [[noreturn]] static void Die(const char* what) {
    std::perror(what);
    std::abort();
  }

  int fd_;
  std::string path_;
};

}  // namespace drip::fuzz
