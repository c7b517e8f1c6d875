#include "agent/instance_check.h"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <optional>

#include "agent/proc_files.h"
#include "common/base/process_instance.h"
#include "fmt/format.h"

namespace drip::agent {

std::string CheckProcessInstance(const std::string& proc_root, int pid, const std::string& instance,
                                 InstanceCheck mode) {
  const bool strict = mode == InstanceCheck::kStrict;
  std::string text;
  if (!ReadProcFile(fmt::format("{}/{}/stat", proc_root, pid), &text).ok()) {
    return fmt::format("process {} no longer runs", pid);
  }
  const std::optional<ProcessInstance> expected = ParseProcessInstance(instance);
  if (!expected) {
    // Best effort: without a PID@START to compare, the pid alone is trusted.
    if (!strict) return "";
    return instance.empty() || instance.find('@') == std::string::npos
               ? fmt::format(
                     "no instance (PID@START) given for pid {}: refusing to act on a pid "
                     "alone",
                     pid)
               : fmt::format("instance {} is not PID@START", instance);
  }
  if (strict && expected->pid != pid) {
    return fmt::format("instance {} does not name pid {}", instance, pid);
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
  // The boot time the samplers named the instance by, not a fresh read that a step of
  // the wall clock since has moved.
  absl::StatusOr<int64_t> boot = StableBootTime(proc_root);
  if (!boot.ok()) return unverifiable(std::string(boot.status().message()));
  const int64_t start_s =
      *boot + static_cast<int64_t>(stat->start_ticks / static_cast<uint64_t>(sysconf(_SC_CLK_TCK)));
  // A second of rounding either way between the sampler's reading and this one.
  if (std::llabs(expected->start_s - start_s) > 1) {
    return fmt::format("process {} is not instance {} any more (it is {})", pid, instance,
                       FormatProcessInstance(pid, start_s));
  }
  return "";
}

}  // namespace drip::agent
