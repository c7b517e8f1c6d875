#include "agent/proc_files.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "common/base/strings.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

// Splits "Key:\tvalue" lines; calls f(key, value) with the value trimmed.
template <typename F>
void ForEachKeyValueLine(std::string_view text, F f) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    f(line.substr(0, colon), TrimWhitespace(line.substr(colon + 1)));
  }
}

// "1234 kB" -> bytes. procfs always says kB for these lines.
bool ParseKilobytes(std::string_view value, uint64_t* bytes) {
  size_t space = value.find(' ');
  std::string_view number = value.substr(0, space);
  uint64_t kb = 0;
  if (!ParseNumber(number, &kb)) return false;
  *bytes = kb * 1024;
  return true;
}

}  // namespace

absl::Status ReadProcFile(const std::string& path, std::string* out) {
  out->clear();
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string message = fmt::format("{}: {}", path, std::strerror(err));
    if (err == ENOENT || err == ESRCH) return absl::NotFoundError(message);
    if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
    return absl::InternalError(message);
  }
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      out->append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR) continue;
    int err = errno;
    close(fd);
    std::string message = fmt::format("{}: {}", path, std::strerror(err));
    // A process that exits between open() and read() fails the read with ESRCH.
    if (err == ESRCH || err == ENOENT) return absl::NotFoundError(message);
    if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
    return absl::InternalError(message);
  }
  close(fd);
  return absl::OkStatus();
}

absl::StatusOr<ProcStatus> ParseProcStatus(std::string_view text) {
  ProcStatus status;
  std::string bad_key;
  ForEachKeyValueLine(text, [&](std::string_view key, std::string_view value) {
    uint64_t* target = nullptr;
    if (key == "RssAnon") {
      target = &status.anon_rss_bytes;
      status.has_mm = true;
    } else if (key == "RssFile") {
      target = &status.file_rss_bytes;
    } else if (key == "RssShmem") {
      target = &status.shmem_rss_bytes;
    } else if (key == "VmSwap") {
      target = &status.swap_bytes;
    }
    if (target != nullptr && !ParseKilobytes(value, target) && bad_key.empty()) {
      bad_key = std::string(key);
    }
  });
  if (!bad_key.empty()) {
    return absl::InvalidArgumentError(fmt::format("status: malformed {} line", bad_key));
  }
  return status;
}

absl::StatusOr<ProcStat> ParseProcStat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return absl::InvalidArgumentError("stat: no (comm) field");
  }
  ProcStat stat;
  stat.comm = std::string(text.substr(open + 1, close - open - 1));
  // After ") " come fields 3 (state) onwards, separated by single spaces.
  std::vector<std::string> fields = SplitString(TrimWhitespace(text.substr(close + 1)), ' ');
  // Field N of proc(5) is fields[N - 3].
  constexpr size_t kState = 3 - 3, kUtime = 14 - 3, kStime = 15 - 3, kStartTime = 22 - 3;
  if (fields.size() <= kStartTime) {
    return absl::InvalidArgumentError(fmt::format(
        "stat: {} fields after comm, expected at least {}", fields.size(), kStartTime + 1));
  }
  if (fields[kState].size() != 1) return absl::InvalidArgumentError("stat: malformed state");
  stat.state = fields[kState][0];
  if (!ParseNumber(fields[kUtime], &stat.utime_ticks) ||
      !ParseNumber(fields[kStime], &stat.stime_ticks) ||
      !ParseNumber(fields[kStartTime], &stat.start_ticks)) {
    return absl::InvalidArgumentError("stat: malformed utime, stime or starttime");
  }
  return stat;
}

std::string CgroupPathFromFile(std::string_view text) {
  std::string unified;
  std::string systemd;
  bool has_unified = false;
  for (const std::string& line : SplitString(text, '\n')) {
    // "hierarchy-ID:controller-list:path"; the path itself may contain ':'.
    size_t first = line.find(':');
    if (first == std::string::npos) continue;
    size_t second = line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string_view id = std::string_view(line).substr(0, first);
    std::string_view controllers = std::string_view(line).substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (id == "0" && controllers.empty()) {
      unified = path;
      has_unified = true;
    } else if (controllers == "name=systemd") {
      systemd = path;
    }
  }
  // On hybrid hosts whose systemd still runs the v1 layout, cgroup2 may be mounted but
  // unused, leaving every process at "0::/" while name=systemd holds the real unit.
  if (has_unified && !(unified == "/" && !systemd.empty() && systemd != "/")) return unified;
  return systemd;
}

absl::StatusOr<int64_t> ParseBootTime(std::string_view proc_stat_text) {
  for (const std::string& line : SplitString(proc_stat_text, '\n')) {
    if (line.rfind("btime ", 0) != 0) continue;
    int64_t btime = 0;
    if (!ParseNumber(TrimWhitespace(std::string_view(line).substr(6)), &btime) || btime <= 0) {
      return absl::InvalidArgumentError(fmt::format("malformed btime line '{}'", line));
    }
    return btime;
  }
  return absl::InvalidArgumentError("no btime line");
}

absl::StatusOr<int64_t> StableBootTime(const std::string& proc_root) {
  static std::mutex mu;
  static auto* first_read = new std::map<std::string, int64_t>();  // by proc root; never freed
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = first_read->find(proc_root); it != first_read->end()) return it->second;
  std::string text;
  if (absl::Status read = ReadProcFile(proc_root + "/stat", &text); !read.ok()) return read;
  absl::StatusOr<int64_t> btime = ParseBootTime(text);
  if (!btime.ok()) {
    return absl::InternalError(
        fmt::format("{}/stat: {}", proc_root, std::string(btime.status().message())));
  }
  (*first_read)[proc_root] = *btime;
  return *btime;
}

absl::StatusOr<uint64_t> ParseMeminfoBytes(std::string_view meminfo_text, std::string_view field) {
  std::optional<uint64_t> total;
  bool malformed = false;
  ForEachKeyValueLine(meminfo_text, [&](std::string_view key, std::string_view value) {
    if (key != field || total) return;
    uint64_t bytes = 0;
    if (ParseKilobytes(value, &bytes)) {
      total = bytes;
    } else {
      malformed = true;
    }
  });
  if (malformed) return absl::InvalidArgumentError(fmt::format("malformed {} line", field));
  if (!total) return absl::InvalidArgumentError(fmt::format("no {} line", field));
  return *total;
}

}  // namespace drip::agent
