// Reading and parsing the procfs files the agent looks at: /proc/PID/{status,stat,cgroup},
// /proc/stat, /proc/meminfo. Parsers are pure functions on the file text so that tests
// feed them real-world snippets; the reader maps "the process is gone" to NotFound so
// that callers can tell the normal exit race from a real error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace drip::agent {

// Reads a whole (small, procfs) file. NotFound when the file or its process is gone
// (ENOENT, ESRCH), PermissionDenied on EACCES/EPERM, Internal otherwise; every message
// names the path.
absl::Status ReadProcFile(const std::string& path, std::string* out);

// Memory figures of /proc/PID/status, converted from kB to bytes.
struct ProcStatus {
  // False for kernel threads and zombies: they have no mm, so no RssAnon line.
  bool has_mm = false;
  uint64_t anon_rss_bytes = 0;
  uint64_t file_rss_bytes = 0;
  uint64_t shmem_rss_bytes = 0;
  uint64_t swap_bytes = 0;
};
absl::StatusOr<ProcStatus> ParseProcStatus(std::string_view text);

// The fields of /proc/PID/stat the agent uses.
struct ProcStat {
  std::string comm;  // may contain spaces and parentheses
  char state = '?';
  uint64_t utime_ticks = 0;
  uint64_t stime_ticks = 0;
  uint64_t start_ticks = 0;  // since boot, in sysconf(_SC_CLK_TCK) units
};
// comm is parsed up to the LAST ')' because a process may name itself "a) (b".
absl::StatusOr<ProcStat> ParseProcStat(std::string_view text);

// The cgroup path of a process from /proc/PID/cgroup: the cgroup v2 line ("0::/path"),
// or the name=systemd v1 line on legacy and hybrid hosts. "" when neither is present.
std::string CgroupPathFromFile(std::string_view text);

// "btime" of /proc/stat: boot time in Unix seconds.
absl::StatusOr<int64_t> ParseBootTime(std::string_view proc_stat_text);

// The boot time (Unix seconds) of `proc_root`/stat as this process first read it: what
// process instances (PID@START) are named from, by the samplers and the checks before a
// command acts alike. The kernel computes btime as the wall clock now minus the time
// since boot, so a step of the wall clock (NTP, a VM's clock caught up after a pause)
// moves it; read once, an instance keeps its name for the agent's life, and a check never
// takes a clock step for a restarted process. Errors name the file. Thread-safe.
absl::StatusOr<int64_t> StableBootTime(const std::string& proc_root);

// A "kB" field of /proc/meminfo ("MemTotal", "SwapTotal"), in bytes.
absl::StatusOr<uint64_t> ParseMeminfoBytes(std::string_view meminfo_text, std::string_view field);

}  // namespace drip::agent
