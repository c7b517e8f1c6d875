// ElfFunctionIndex: the functions an ELF file defines, by name, with the file offsets a
// uprobe is attached at. The heap snapshotter uses it to find which mapped module of the
// target really implements malloc, operator new and the rest (the executable when it is
// static or brings its own allocator, jemalloc or tcmalloc when loaded, else glibc and
// libstdc++), from .dynsym and .symtab.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"

namespace drip::agent {

class ElfFunctionIndex {
 public:
  // Reads the symbol tables of `path`. Fails when the file is unreadable or not ELF.
  static absl::StatusOr<ElfFunctionIndex> Read(const std::string& path);

  // The file offset of the entry of `name` when the file defines it (a FUNC
  // symbol with a section and a non-zero address), else nullopt. Versioned dynamic
  // symbols answer to their bare name.
  std::optional<uint64_t> FunctionOffset(const std::string& name) const;

  // Whether the file calls `name` from another module: an undefined function symbol of
  // .dynsym (bare name, as above). How the snapshotter tells which allocator entry
  // points a program really calls.
  bool Imports(const std::string& name) const { return imports_.contains(name); }

  size_t size() const { return offsets_.size(); }

 private:
  absl::flat_hash_map<std::string, uint64_t> offsets_;
  absl::flat_hash_set<std::string> imports_;
};

}  // namespace drip::agent
