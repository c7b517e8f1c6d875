#include "agent/process_instance.h"

#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "agent/proc_files.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

// The whole of `text` as a decimal integer, or nullopt.
std::optional<int64_t> ParseWholeInt(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

std::string CheckProcessInstance(const std::string& proc_root, int pid, const std::string& instance,
                                 InstanceCheck mode) {
  const bool strict = mode == InstanceCheck::kStrict;
  std::string text;
  if (!ReadProcFile(fmt::format("{}/{}/stat", proc_root, pid), &text).ok()) {
    return fmt::format("process {} no longer runs", pid);
  }
  const size_t at = instance.find('@');
  if (instance.empty() || at == std::string::npos) {
    if (!strict) return "";
    return fmt::format("no instance (PID@START) given for pid {}: refusing to act on a pid alone",
                       pid);
  }
  if (strict) {
    std::optional<int64_t> instance_pid = ParseWholeInt(instance.substr(0, at));
    if (!instance_pid || *instance_pid != pid) {
      return fmt::format("instance {} does not name pid {}", instance, pid);
    }
  }
  // Best effort: what cannot be read or parsed below lets the command go ahead; strict:
  // it is the reason for refusing.
  auto unverifiable = [&](const std::string& why) {
    return strict
               ? fmt::format("cannot verify that process {} is instance {}: {}", pid, instance, why)
               : std::string();
  };
  auto stat = ParseProcStat(text);
  if (!stat.ok()) return unverifiable(std::string(stat.status().message()));
  std::string proc_stat;
  if (absl::Status read = ReadProcFile(proc_root + "/stat", &proc_stat); !read.ok()) {
    return unverifiable(std::string(read.message()));
  }
  auto boot = ParseBootTime(proc_stat);
  if (!boot.ok()) return unverifiable(std::string(boot.status().message()));
  const int64_t start_s =
      *boot + static_cast<int64_t>(stat->start_ticks / static_cast<uint64_t>(sysconf(_SC_CLK_TCK)));
  const std::string now = fmt::format("{}@{}", pid, start_s);
  const std::string expected_start = instance.substr(at + 1);
  int64_t then = 0;
  if (strict) {
    std::optional<int64_t> parsed = ParseWholeInt(expected_start);
    if (!parsed) return fmt::format("instance {}: the start time is not a number", instance);
    then = *parsed;
  } else {
    // Kept as the snapshot runner always parsed it: a leading number is enough.
    try {
      then = std::stoll(expected_start);
    } catch (...) {
      return "";
    }
  }
  // A second of rounding either way between the sampler's reading and this one.
  if (std::llabs(then - start_s) > 1) {
    return fmt::format("process {} is not instance {} any more (it is {})", pid, instance, now);
  }
  return "";
}

}  // namespace drip::agent
