// ElfFile: one ELF file opened with libelf, closed (elf_end, then the descriptor) when it
// goes out of scope. The agent reads ELF files in two places — the executable's build-id
// for the versions it reports (instance_version_reader.h) and the allocator symbols the
// heap snapshotter probes (heap/elf_function_index.h) — and both open them this way.
#pragma once

#include <libelf.h>

#include <string>

#include "absl/status/statusor.h"

namespace drip::agent {

class ElfFile {
 public:
  // NotFound (naming the path and errno) when the file cannot be opened,
  // InvalidArgument when it is not ELF.
  static absl::StatusOr<ElfFile> Open(const std::string& path);

  ElfFile(ElfFile&& other) noexcept;
  ElfFile& operator=(ElfFile&& other) noexcept;
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile();

  Elf* elf() const { return elf_; }

 private:
  ElfFile(int fd, Elf* elf) : fd_(fd), elf_(elf) {}
  void Close();

  int fd_ = -1;
  Elf* elf_ = nullptr;
};

}  // namespace drip::agent
