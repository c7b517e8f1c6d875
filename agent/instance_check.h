// The check every command that acts on a process makes first: is this pid still the
// process instance (PID@START, common/base/process_instance.h) the collector saw, and not
// a restart or a recycled pid? Shared by SnapshotCommandRunner and MitigationExecutor.
// Pure reads of procfs under `proc_root`; the function is thread-safe.
#pragma once

#include <string>

namespace drip::agent {

enum class InstanceCheck {
  // The snapshot runner's check: the process must run; the instance is compared only when
  // it is given as PID@START and the start time can be read. A snapshot of the wrong
  // process only wastes a little CPU.
  kBestEffort,
  // For actions that change the host (signals): the instance is required, must name this
  // pid, and the start time must be read and match; anything unreadable is a refusal.
  kStrict,
};

// "" when `pid` under `proc_root` is still `instance`, else why not, e.g. "process 1234 is
// not instance 1234@1700000000 any more (it is 1234@1700000480)". Start times may differ
// by one second (rounding between the sampler's reading and this one).
std::string CheckProcessInstance(const std::string& proc_root, int pid, const std::string& instance,
                                 InstanceCheck mode = InstanceCheck::kBestEffort);

}  // namespace drip::agent
