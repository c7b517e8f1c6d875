// CgroupLimitReader: the memory limit an entity's cgroup makes it run under, and the OOM
// kills the kernel counted there — what tells the detector how close a leak is to the
// OOM killer (docs/agent.md, "Memory limits and OOM kills").
//
// Read from the hierarchy that has the memory controller (FindMemoryHierarchy):
//   v2      memory.max, memory.high, memory.swap.max; memory.events ("oom_kill N")
//   v1      memory.limit_in_bytes, memory.memsw.limit_in_bytes; memory.oom_control
//           ("oom_kill N", kernels 4.13 and later)
// The limit is the nearest one on the cgroup's path: its own, else an ancestor's (a unit
// in a slice with MemoryMax=, a process in a container's cgroup). A value at or above
// 2^62 is no limit (v1 writes "unlimited" as the page counter's maximum). The kill count
// is the entity's own cgroup's. Swap counts as the limit's too, up to the host's swap:
// Drip's unreclaimable memory includes swap, and the kernel kills only once both are
// full.
//
// Every cgroup's files are read once per pass (BeginPass): a unit of a hundred processes
// costs one read. Not thread-safe: the sampling thread's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "agent/cgroup_tree.h"
#include "drip/v1/sample.pb.h"

namespace drip::agent {

class CgroupLimitReader {
 public:
  // `memory_hierarchy.memory` must be true (a hierarchy without the controller has no
  // limits to read).
  explicit CgroupLimitReader(CgroupMount memory_hierarchy);

  // Forgets what the last pass read. `host_swap_bytes`: the host's swap (SwapTotal), the
  // most swap any cgroup can use.
  void BeginPass(uint64_t host_swap_bytes);

  // The limit of the cgroup at `path` (relative to the mount: "/system.slice/x.service"),
  // or nullopt when its path sets none and it saw no kill, or it cannot be read (it is
  // gone: the entity is sampled without one).
  std::optional<drip::v1::MemoryLimit> LimitOf(std::string_view path);

  const CgroupMount& hierarchy() const { return hierarchy_; }

  // The path of the process's cgroup in a hierarchy, from /proc/PID/cgroup: the "0::"
  // line for v2, the line listing the memory controller for v1. "" when absent.
  static std::string MemoryCgroupOf(std::string_view proc_cgroup, bool v2);
  // A limit file's value: nullopt for "max", a v1 value of 2^62 or more, or text that is
  // not a number.
  static std::optional<uint64_t> ParseLimit(std::string_view text);
  // The "oom_kill N" line of memory.events (v2) or memory.oom_control (v1).
  static std::optional<uint64_t> ParseOomKills(std::string_view text);

 private:
  // One cgroup's own files.
  struct Own {
    bool readable = false;
    std::optional<uint64_t> max;
    std::optional<uint64_t> high;
    std::optional<uint64_t> swap;  // v2: memory.swap.max; v1: memsw minus max
    uint64_t oom_kills = 0;
  };
  const Own& ReadOwn(const std::string& path);

  const CgroupMount hierarchy_;
  uint64_t host_swap_bytes_ = 0;
  std::unordered_map<std::string, Own> own_;  // this pass's reads, by path
  std::string buffer_;
};

}  // namespace drip::agent
