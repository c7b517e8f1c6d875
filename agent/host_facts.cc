#include "agent/host_facts.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "agent/proc_files.h"
#include "common/base/status_macros.h"
#include "common/base/strings.h"
#include "fmt/format.h"

namespace drip::agent {

std::string ParseOsReleasePrettyName(const std::string& text) {
  for (const std::string& line : SplitString(text, '\n')) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string_view value = TrimWhitespace(std::string_view(line).substr(12));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    return std::string(value);
  }
  return "";
}

absl::StatusOr<HostFacts> HostFacts::Read(const std::string& proc_root,
                                          const std::string& os_release_path) {
  HostFacts facts;
  struct utsname uts {};
  if (uname(&uts) == 0) {
    facts.kernel = uts.release;
    facts.arch = uts.machine;
  }
  std::string text;
  RETURN_IF_ERROR(ReadProcFile(proc_root + "/meminfo", &text));
  absl::StatusOr<uint64_t> total = ParseMeminfoBytes(text, "MemTotal");
  if (!total.ok()) {
    return absl::InternalError(
        fmt::format("{}/meminfo: {}", proc_root, std::string(total.status().message())));
  }
  facts.memory_total_bytes = *total;
  RETURN_IF_ERROR(ReadProcFile(proc_root + "/stat", &text));
  absl::StatusOr<int64_t> btime = ParseBootTime(text);
  if (!btime.ok()) {
    return absl::InternalError(
        fmt::format("{}/stat: {}", proc_root, std::string(btime.status().message())));
  }
  facts.boot_time_ms = *btime * 1000;

  std::ifstream in(os_release_path);
  if (in) {
    std::stringstream os_release;
    os_release << in.rdbuf();
    facts.os = ParseOsReleasePrettyName(os_release.str());
  }
  return facts;
}

absl::StatusOr<SelfUsage> SelfUsage::Read(const std::string& proc_root) {
  std::string text;
  RETURN_IF_ERROR(ReadProcFile(proc_root + "/self/stat", &text));
  ASSIGN_OR_RETURN(ProcStat stat, ParseProcStat(text));
  RETURN_IF_ERROR(ReadProcFile(proc_root + "/self/status", &text));
  ASSIGN_OR_RETURN(ProcStatus status, ParseProcStatus(text));
  SelfUsage usage;
  const long ticks = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
  usage.cpu_seconds =
      static_cast<double>(stat.utime_ticks + stat.stime_ticks) / static_cast<double>(ticks);
  usage.rss_bytes = status.anon_rss_bytes + status.file_rss_bytes + status.shmem_rss_bytes;
  return usage;
}

}  // namespace drip::agent
