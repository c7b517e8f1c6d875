#include "agent/proc_maps.h"

#include <cinttypes>
#include <cstdio>

namespace drip::agent {

std::vector<MapsEntry> ParseProcMaps(std::string_view text) {
  std::vector<MapsEntry> entries;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    // sscanf needs a terminated string; a line is short.
    const std::string line(text.substr(0, newline));
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);

    MapsEntry e;
    char perms[8] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
                    &e.start, &e.end, perms, &e.offset, &e.dev_major, &e.dev_minor, &e.inode,
                    &path_at) < 7 ||
        e.end < e.start) {
      continue;
    }
    e.perms = perms;
    // %n is not counted, and is left 0 when the line ends before it.
    if (path_at > 0 && static_cast<size_t>(path_at) <= line.size()) e.path = line.substr(path_at);
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace drip::agent
