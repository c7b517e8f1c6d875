// CgroupTree: one mounted cgroup hierarchy seen as systemd lays it out — where it is
// mounted, which of its directories are units (the components of a host), and which
// directory a kernel cgroup id names (the BPF sampler gets ids, not paths).
//
// Hosts come in three layouts: unified (cgroup v2 only, Debian 11+), hybrid (v2 mounted
// next to v1 controllers; the memory controller is on v1) and legacy (v1 only). The
// agent names processes by the v2 (or name=systemd) tree and reads unit memory from the
// hierarchy that has the memory controller, which FindMemoryHierarchy picks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"

namespace drip::agent {

// A mounted hierarchy: its mount point, whether it is cgroup v2, and whether it has the
// memory controller (without it, a unit's memory is the sum of its processes').
struct CgroupMount {
  std::string path;
  bool v2 = false;
  bool memory = true;
};

// From /proc/self/mountinfo text: the cgroup2 mount, if any.
std::optional<CgroupMount> FindCgroup2Mount(std::string_view mountinfo);
// The hierarchy to read units from: cgroup2 when its cgroup.controllers lists memory,
// else the v1 hierarchy mounted with the memory option, else cgroup2 without the
// controller (memory = false). `read_file` reads a small file (for tests). NotFound,
// naming what was looked at, when no cgroup hierarchy is mounted at all.
absl::StatusOr<CgroupMount> FindMemoryHierarchy(
    std::string_view mountinfo,
    const std::function<std::optional<std::string>(const std::string&)>& read_file);

class CgroupTree {
 public:
  // A systemd unit's cgroup directory.
  struct Unit {
    std::string name;  // "nginx.service"
    std::string path;  // relative to the mount: "/system.slice/nginx.service"
    uint64_t id = 0;   // inode number, which is the kernel's cgroup id (kernfs id)
  };

  explicit CgroupTree(std::string mount_path);

  // Every *.service and *.scope directory under /system.slice and /user.slice, at any
  // depth (user@1000.service/app.slice/x.service too). Sorted by path. Directories that
  // vanish during the walk are skipped.
  std::vector<Unit> ListUnits() const;

  // The path (relative to the mount, "/" for the root) of the cgroup with kernel id
  // `id`. A miss rescans the tree, at most once per `generation` (the caller bumps it
  // once per pass) so that a stream of unknown ids costs one walk, not one each.
  std::optional<std::string> PathOf(uint64_t id, uint64_t generation);

  const std::string& mount_path() const { return mount_path_; }

 private:
  void Rescan();

  std::string mount_path_;
  std::unordered_map<uint64_t, std::string> path_by_id_;
  uint64_t scanned_generation_ = UINT64_MAX;
};

}  // namespace drip::agent
