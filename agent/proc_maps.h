// /proc/PID/maps, parsed once for every reader of it in the agent: the allocator probe
// plan (which files the target mapped), the stack unwinder (modules and their load
// addresses) and the heap probe session (where the agent's own code is mapped).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace drip::agent {

// One line of the maps file: "start-end perms offset major:minor inode   path".
struct MapsEntry {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string perms;  // "r-xp"
  uint64_t offset = 0;
  unsigned dev_major = 0;
  unsigned dev_minor = 0;
  uint64_t inode = 0;
  // The file (may end in " (deleted)"), a pseudo-path such as "[vdso]" or "[heap]", or
  // empty for an anonymous mapping.
  std::string path;
};

// Every line of `text` that parses, in file order; lines that do not are skipped (the
// kernel writes none such, but a maps file read while it changes may end mid-line).
std::vector<MapsEntry> ParseProcMaps(std::string_view text);

}  // namespace drip::agent
