#include "agent/elf_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "fmt/format.h"

namespace drip::agent {

absl::StatusOr<ElfFile> ElfFile::Open(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) {
    return absl::InternalError("libelf: version mismatch");
  }
  // Non-blocking, and regular files only: a mapped path swapped for a FIFO would block the
  // open (and the snapshot with it) for good, and a device would be read as a file.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    return absl::NotFoundError(fmt::format("{}: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(fmt::format("{}: not a regular file", path));
  }
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    if (elf != nullptr) elf_end(elf);
    close(fd);
    return absl::InvalidArgumentError(fmt::format("{}: not an ELF file", path));
  }
  return ElfFile(fd, elf);
}

ElfFile::ElfFile(ElfFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), elf_(std::exchange(other.elf_, nullptr)) {}

ElfFile& ElfFile::operator=(ElfFile&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = std::exchange(other.fd_, -1);
    elf_ = std::exchange(other.elf_, nullptr);
  }
  return *this;
}

ElfFile::~ElfFile() { Close(); }

void ElfFile::Close() {
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) close(fd_);
  elf_ = nullptr;
  fd_ = -1;
}

}  // namespace drip::agent
