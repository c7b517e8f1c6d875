#include "agent/cgroup_limit_reader.h"

#include <algorithm>

#include "agent/proc_files.h"
#include "common/base/strings.h"

namespace drip::agent {
namespace {

// v1 writes "no limit" as PAGE_COUNTER_MAX pages in bytes (9223372036854771712 on x86-64);
// nothing real comes near 2^62.
constexpr uint64_t kUnlimited = uint64_t{1} << 62;

// The parent of a cgroup path ("/a/b" -> "/a", "/a" -> "/"); "" past the root.
std::string ParentOf(const std::string& path) {
  if (path.empty() || path == "/") return "";
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

}  // namespace

CgroupLimitReader::CgroupLimitReader(CgroupMount memory_hierarchy)
    : hierarchy_(std::move(memory_hierarchy)) {}

void CgroupLimitReader::BeginPass(uint64_t host_swap_bytes) {
  host_swap_bytes_ = host_swap_bytes;
  own_.clear();
}

std::optional<uint64_t> CgroupLimitReader::ParseLimit(std::string_view text) {
  text = TrimWhitespace(text);
  uint64_t value = 0;
  if (text == "max" || !ParseNumber(text, &value) || value >= kUnlimited) return std::nullopt;
  return value;
}

std::optional<uint64_t> CgroupLimitReader::ParseOomKills(std::string_view text) {
  for (const std::string& line : SplitString(text, '\n')) {
    constexpr std::string_view kKey = "oom_kill ";
    if (!line.starts_with(kKey)) continue;
    uint64_t value = 0;
    if (ParseNumber(TrimWhitespace(std::string_view(line).substr(kKey.size())), &value)) {
      return value;
    }
  }
  return std::nullopt;
}

std::string CgroupLimitReader::MemoryCgroupOf(std::string_view proc_cgroup, bool v2) {
  for (const std::string& line : SplitString(proc_cgroup, '\n')) {
    // "hierarchy-ID:controller-list:path"; the path itself may contain ':'.
    const size_t first = line.find(':');
    if (first == std::string::npos) continue;
    const size_t second = line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string_view id = std::string_view(line).substr(0, first);
    const std::string_view controllers =
        std::string_view(line).substr(first + 1, second - first - 1);
    if (v2) {
      if (id == "0" && controllers.empty()) return line.substr(second + 1);
      continue;
    }
    for (const std::string& controller : SplitString(controllers, ',')) {
      if (controller == "memory") return line.substr(second + 1);
    }
  }
  return "";
}

const CgroupLimitReader::Own& CgroupLimitReader::ReadOwn(const std::string& path) {
  auto [it, inserted] = own_.try_emplace(path);
  Own& own = it->second;
  if (!inserted) return own;
  const std::string dir = hierarchy_.path + (path == "/" ? "" : path);
  auto read = [&](const char* file) -> std::optional<std::string_view> {
    if (!ReadProcFile(dir + "/" + file, &buffer_).ok()) return std::nullopt;
    return std::string_view(buffer_);
  };
  if (hierarchy_.v2) {
    // The root has no memory.max: it is the host's memory.
    if (auto text = read("memory.max")) {
      own.readable = true;
      own.max = ParseLimit(*text);
    }
    if (auto text = read("memory.high")) own.high = ParseLimit(*text);
    if (auto text = read("memory.swap.max")) own.swap = ParseLimit(*text);
    if (auto text = read("memory.events")) own.oom_kills = ParseOomKills(*text).value_or(0);
    if (path == "/") own.readable = true;
    return own;
  }
  if (auto text = read("memory.limit_in_bytes")) {
    own.readable = true;
    own.max = ParseLimit(*text);
  }
  if (auto text = read("memory.memsw.limit_in_bytes")) {
    if (std::optional<uint64_t> memsw = ParseLimit(*text); memsw && own.max) {
      own.swap = *memsw > *own.max ? *memsw - *own.max : 0;
    }
  }
  if (auto text = read("memory.oom_control")) own.oom_kills = ParseOomKills(*text).value_or(0);
  return own;
}

std::optional<drip::v1::MemoryLimit> CgroupLimitReader::LimitOf(std::string_view path_view) {
  std::string path(path_view.empty() ? "/" : path_view);
  const Own& own = ReadOwn(path);
  if (!own.readable) return std::nullopt;
  drip::v1::MemoryLimit limit;
  limit.set_oom_kills(own.oom_kills);
  // The nearest cgroup on the path that sets a limit.
  for (std::string at = path; !at.empty(); at = ParentOf(at)) {
    const Own& up = ReadOwn(at);
    if (!up.readable || !up.max) continue;
    limit.set_max_bytes(*up.max);
    limit.set_high_bytes(up.high.value_or(0));
    // v2 without swap accounting has no memory.swap.max: swap is not limited there, and
    // the host's is what it may use.
    limit.set_swap_bytes(std::min(up.swap.value_or(host_swap_bytes_), host_swap_bytes_));
    limit.set_cgroup(at);
    break;
  }
  if (limit.max_bytes() == 0 && limit.oom_kills() == 0) return std::nullopt;
  return limit;
}

}  // namespace drip::agent
