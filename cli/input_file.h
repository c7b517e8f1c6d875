// InputFile: a file dripctl takes as input — a path, or "-" for standard input — opened
// the one way every offline command opens its input (`analyze --input`, `diagnose`), so
// that their errors read the same: they name the file, and a file that cannot be read is
// bad input (INVALID_ARGUMENT, exit 2).
//
// Move-only; closes what it opened (never stdin).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace drip::cli {

class InputFile {
 public:
  static absl::StatusOr<InputFile> Open(const std::string& path);

  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) = delete;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  // The path, or "<stdin>": what error messages name.
  const std::string& name() const { return name_; }
  // The size of a regular file; 0 for a pipe or a terminal.
  uint64_t size() const { return size_; }

  // Up to `capacity` bytes into `buffer`; 0 at the end.
  absl::StatusOr<size_t> Read(char* buffer, size_t capacity);
  // The same from `offset`, leaving the file position alone: a regular file only
  // (size() > 0). Thread-safe.
  absl::StatusOr<size_t> ReadAt(uint64_t offset, char* buffer, size_t capacity) const;
  // Everything that is left.
  absl::StatusOr<std::string> ReadAll();

 private:
  InputFile(std::string name, int fd, bool owned, uint64_t size);

  std::string name_;
  int fd_ = -1;
  bool owned_ = false;
  uint64_t size_ = 0;
};

}  // namespace drip::cli
