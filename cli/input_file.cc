#include "cli/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "fmt/format.h"

namespace drip::cli {

absl::StatusOr<InputFile> InputFile::Open(const std::string& path) {
  const bool is_stdin = path == "-";
  std::string name = is_stdin ? "<stdin>" : path;
  const int fd = is_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InvalidArgumentError(
        fmt::format("{}: cannot open: {}", name, std::strerror(errno)));
  }
  InputFile file(std::move(name), fd, !is_stdin, 0);
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(fmt::format("{}: is a directory", file.name_));
    }
    if (S_ISREG(st.st_mode)) {
      file.size_ = static_cast<uint64_t>(st.st_size);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
  }
  return file;
}

InputFile::InputFile(std::string name, int fd, bool owned, uint64_t size)
    : name_(std::move(name)), fd_(fd), owned_(owned), size_(size) {}

InputFile::InputFile(InputFile&& other) noexcept
    : name_(std::move(other.name_)),
      fd_(std::exchange(other.fd_, -1)),
      owned_(std::exchange(other.owned_, false)),
      size_(other.size_) {}

InputFile::~InputFile() {
  if (owned_ && fd_ >= 0) ::close(fd_);
}

absl::StatusOr<size_t> InputFile::Read(char* buffer, size_t capacity) {
  for (;;) {
    const ssize_t n = ::read(fd_, buffer, capacity);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EINTR) {
      return absl::InvalidArgumentError(
          fmt::format("{}: read failed: {}", name_, std::strerror(errno)));
    }
  }
}

absl::StatusOr<size_t> InputFile::ReadAt(uint64_t offset, char* buffer, size_t capacity) const {
  for (;;) {
    const ssize_t n = ::pread(fd_, buffer, capacity, static_cast<off_t>(offset));
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EINTR) {
      return absl::InvalidArgumentError(
          fmt::format("{}: read failed: {}", name_, std::strerror(errno)));
    }
  }
}

absl::StatusOr<std::string> InputFile::ReadAll() {
  std::string text;
  if (size_ > 0) text.reserve(size_);
  char buffer[1 << 16];
  for (;;) {
    absl::StatusOr<size_t> n = Read(buffer, sizeof(buffer));
    if (!n.ok()) return n.status();
    if (*n == 0) return text;
    text.append(buffer, *n);
  }
}

}  // namespace drip::cli
