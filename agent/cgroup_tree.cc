#include "agent/cgroup_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "common/base/strings.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

struct MountLine {
  std::string mount_point;
  std::string fs_type;
  std::string super_options;
};

// mountinfo: "ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTS".
std::vector<MountLine> ParseMountinfo(std::string_view text) {
  std::vector<MountLine> mounts;
  for (const std::string& line : SplitString(text, '\n')) {
    std::vector<std::string> f = SplitString(line, ' ');
    auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || f.end() - dash < 4) continue;
    mounts.push_back({f[4], *(dash + 1), *(dash + 3)});
  }
  return mounts;
}

bool HasOption(std::string_view options, std::string_view option) {
  for (const std::string& o : SplitString(options, ',')) {
    if (o == option) return true;
  }
  return false;
}

bool IsUnitName(std::string_view name) {
  return name.ends_with(".service") || name.ends_with(".scope");
}

// Calls visit(relative_path, name, inode) for every directory under `root`/`relative`.
template <typename Visit>
void WalkDirectories(const std::string& root, const std::string& relative, const Visit& visit,
                     int depth = 0) {
  // systemd nests a few levels (user.slice/user-1000.slice/user@1000.service/app.slice/
  // x.service/...); a bound keeps a pathological tree from costing a pass.
  if (depth > 16) return;
  const std::string dir_path = root + relative;
  DIR* dir = opendir(dir_path.c_str());
  if (dir == nullptr) return;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_type != DT_DIR || entry->d_name[0] == '.') continue;
    const std::string child = fmt::format("{}/{}", relative == "/" ? "" : relative, entry->d_name);
    visit(child, std::string_view(entry->d_name), static_cast<uint64_t>(entry->d_ino));
    WalkDirectories(root, child, visit, depth + 1);
  }
  closedir(dir);
}

}  // namespace

std::optional<CgroupMount> FindCgroup2Mount(std::string_view mountinfo) {
  for (const MountLine& m : ParseMountinfo(mountinfo)) {
    if (m.fs_type == "cgroup2") return CgroupMount{m.mount_point, true};
  }
  return std::nullopt;
}

absl::StatusOr<CgroupMount> FindMemoryHierarchy(
    std::string_view mountinfo,
    const std::function<std::optional<std::string>(const std::string&)>& read_file) {
  const std::vector<MountLine> mounts = ParseMountinfo(mountinfo);
  for (const MountLine& m : mounts) {
    if (m.fs_type != "cgroup2") continue;
    std::optional<std::string> controllers = read_file(m.mount_point + "/cgroup.controllers");
    if (controllers) {
      for (const std::string& c : SplitString(TrimWhitespace(*controllers), ' ')) {
        if (c == "memory") return CgroupMount{m.mount_point, true};
      }
    }
  }
  for (const MountLine& m : mounts) {
    if (m.fs_type == "cgroup" && HasOption(m.super_options, "memory")) {
      return CgroupMount{m.mount_point, false};
    }
  }
  if (std::optional<CgroupMount> v2 = FindCgroup2Mount(mountinfo)) {
    v2->memory = false;
    return *v2;
  }
  return absl::NotFoundError(
      "no cgroup hierarchy is mounted (neither cgroup2 nor a v1 memory "
      "hierarchy in mountinfo)");
}

CgroupTree::CgroupTree(std::string mount_path) : mount_path_(std::move(mount_path)) {}

std::vector<CgroupTree::Unit> CgroupTree::ListUnits() const {
  std::vector<Unit> units;
  for (const char* slice : {"/system.slice", "/user.slice"}) {
    WalkDirectories(mount_path_, slice,
                    [&](const std::string& path, std::string_view name, uint64_t id) {
                      if (IsUnitName(name)) units.push_back({std::string(name), path, id});
                    });
  }
  std::sort(units.begin(), units.end(),
            [](const Unit& a, const Unit& b) { return a.path < b.path; });
  return units;
}

std::optional<std::string> CgroupTree::PathOf(uint64_t id, uint64_t generation) {
  auto it = path_by_id_.find(id);
  if (it == path_by_id_.end() && scanned_generation_ != generation) {
    scanned_generation_ = generation;
    Rescan();
    it = path_by_id_.find(id);
  }
  if (it == path_by_id_.end()) return std::nullopt;
  return it->second;
}

void CgroupTree::Rescan() {
  path_by_id_.clear();
  struct stat root_stat {};
  if (stat(mount_path_.c_str(), &root_stat) == 0) {
    path_by_id_[static_cast<uint64_t>(root_stat.st_ino)] = "/";
  }
  WalkDirectories(mount_path_, "/", [&](const std::string& path, std::string_view, uint64_t id) {
    path_by_id_[id] = path;
  });
}

}  // namespace drip::agent
