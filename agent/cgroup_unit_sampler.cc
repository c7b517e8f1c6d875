#include "agent/cgroup_unit_sampler.h"

#include <dirent.h>

#include "agent/component_namer.h"
#include "agent/proc_files.h"
#include "common/base/strings.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

// Calls set(key, value) for each "key value" line of a memory.stat file.
template <typename Set>
void ForEachStatLine(std::string_view text, const Set& set) {
  for (const std::string& line : SplitString(text, '\n')) {
    const size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    uint64_t value = 0;
    if (!ParseNumber(std::string_view(line).substr(space + 1), &value)) continue;
    set(std::string_view(line).substr(0, space), value);
  }
}

absl::StatusOr<uint64_t> ReadNumberFile(const std::string& path, std::string* buffer) {
  absl::Status read = ReadProcFile(path, buffer);
  if (!read.ok()) return read;
  uint64_t value = 0;
  if (!ParseNumber(TrimWhitespace(*buffer), &value)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: '{}' is not a number", path, std::string(TrimWhitespace(*buffer))));
  }
  return value;
}

// Whether a unit's cgroup path runs through another unit (a user's manager, a service's
// delegated subtree, a container's scope) before reaching it.
bool InsideAUnit(const std::string& path) {
  const std::vector<std::string> parts = SplitString(path, '/');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i].ends_with(".service") || parts[i].ends_with(".scope")) return true;
  }
  return false;
}

}  // namespace

CgroupUnitSampler::CgroupUnitSampler(CgroupMount memory_hierarchy, std::string proc_root)
    : hierarchy_(std::move(memory_hierarchy)),
      proc_root_(std::move(proc_root)),
      tree_(hierarchy_.path) {}

absl::StatusOr<drip::v1::CgroupMemory> CgroupUnitSampler::SumProcesses(
    const std::string& dir) const {
  drip::v1::CgroupMemory memory;
  std::string buffer;
  // The unit's own cgroup and every cgroup below it (services may nest their own).
  std::vector<std::string> dirs = {dir};
  for (size_t i = 0; i < dirs.size(); ++i) {
    absl::Status read = ReadProcFile(dirs[i] + "/cgroup.procs", &buffer);
    if (!read.ok()) {
      if (i == 0) return read;  // the unit itself is gone or unreadable
      continue;
    }
    for (const std::string& line : SplitString(buffer, '\n')) {
      int pid = 0;
      if (!ParseNumber(std::string_view(line), &pid)) continue;
      std::string status_text;
      if (!ReadProcFile(fmt::format("{}/{}/status", proc_root_, pid), &status_text).ok()) continue;
      absl::StatusOr<ProcStatus> status = ParseProcStatus(status_text);
      if (!status.ok() || !status->has_mm) continue;
      memory.set_anon_bytes(memory.anon_bytes() + status->anon_rss_bytes);
      memory.set_shmem_bytes(memory.shmem_bytes() + status->shmem_rss_bytes);
      memory.set_swap_bytes(memory.swap_bytes() + status->swap_bytes);
      memory.set_current_bytes(memory.current_bytes() + status->anon_rss_bytes +
                               status->file_rss_bytes + status->shmem_rss_bytes);
    }
    if (DIR* d = opendir(dirs[i].c_str())) {
      while (const dirent* entry = readdir(d)) {
        if (entry->d_type == DT_DIR && entry->d_name[0] != '.') {
          dirs.push_back(fmt::format("{}/{}", dirs[i], entry->d_name));
        }
      }
      closedir(d);
    }
  }
  return memory;
}

void CgroupUnitSampler::ParseV2Stat(std::string_view text, drip::v1::CgroupMemory* out) {
  ForEachStatLine(text, [out](std::string_view key, uint64_t value) {
    if (key == "anon")
      out->set_anon_bytes(value);
    else if (key == "kernel")
      out->set_kernel_bytes(value);
    else if (key == "slab_unreclaimable")
      out->set_slab_unreclaimable_bytes(value);
    else if (key == "sock")
      out->set_sock_bytes(value);
    else if (key == "shmem")
      out->set_shmem_bytes(value);
  });
}

void CgroupUnitSampler::ParseV1Stat(std::string_view text, drip::v1::CgroupMemory* out) {
  // The total_* lines include descendant cgroups, as v2's figures do.
  ForEachStatLine(text, [out](std::string_view key, uint64_t value) {
    if (key == "total_rss")
      out->set_anon_bytes(value);
    else if (key == "total_shmem")
      out->set_shmem_bytes(value);
    else if (key == "total_swap")
      out->set_swap_bytes(value);
  });
}

absl::StatusOr<drip::v1::CgroupMemory> CgroupUnitSampler::ReadCgroup(const std::string& dir) const {
  drip::v1::CgroupMemory memory;
  if (!hierarchy_.memory) return SumProcesses(dir);
  std::string buffer;
  if (hierarchy_.v2) {
    absl::StatusOr<uint64_t> current = ReadNumberFile(dir + "/memory.current", &buffer);
    if (!current.ok()) return current.status();
    memory.set_current_bytes(*current);
    absl::Status read = ReadProcFile(dir + "/memory.stat", &buffer);
    if (!read.ok()) return read;
    ParseV2Stat(buffer, &memory);
    // Absent without swap accounting; swap then stays 0.
    if (absl::StatusOr<uint64_t> swap = ReadNumberFile(dir + "/memory.swap.current", &buffer);
        swap.ok()) {
      memory.set_swap_bytes(*swap);
    }
    return memory;
  }
  absl::StatusOr<uint64_t> usage = ReadNumberFile(dir + "/memory.usage_in_bytes", &buffer);
  if (!usage.ok()) return usage.status();
  memory.set_current_bytes(*usage);
  absl::Status read = ReadProcFile(dir + "/memory.stat", &buffer);
  if (!read.ok()) return read;
  ParseV1Stat(buffer, &memory);
  // Kernel and socket memory are separate counters in v1, absent when kmem accounting is
  // off; v1 has no unreclaimable-slab split.
  if (absl::StatusOr<uint64_t> kmem = ReadNumberFile(dir + "/memory.kmem.usage_in_bytes", &buffer);
      kmem.ok()) {
    memory.set_kernel_bytes(*kmem);
  }
  if (absl::StatusOr<uint64_t> tcp =
          ReadNumberFile(dir + "/memory.kmem.tcp.usage_in_bytes", &buffer);
      tcp.ok()) {
    memory.set_sock_bytes(*tcp);
  }
  return memory;
}

void CgroupUnitSampler::AppendSamples(int64_t timestamp_ms, std::vector<drip::v1::Sample>* out) {
  const std::vector<CgroupTree::Unit> units = tree_.ListUnits();
  uint64_t sampled = 0;
  for (const CgroupTree::Unit& unit : units) {
    absl::StatusOr<drip::v1::CgroupMemory> memory = ReadCgroup(hierarchy_.path + unit.path);
    if (!memory.ok()) {
      if (absl::IsNotFound(memory.status())) continue;  // the unit stopped meanwhile
      if (errors_++ == 0) {
        Logger("agent")->warn("cgroup sampler: {} (further errors are only counted)",
                              std::string(memory.status().message()));
      }
      continue;
    }
    const bool service = unit.name.ends_with(".service");
    // A service nested in another unit (a user's manager, a delegated subtree) is not the
    // host's: its memory is in the enclosing unit's sample, and its name must not pass
    // for a system service's.
    if (service && InsideAUnit(unit.path)) continue;
    drip::v1::Sample& sample = out->emplace_back();
    sample.set_component(
        fmt::format("{}:{}", service ? "svc" : "scope", ComponentNamer::ToValidUtf8(unit.name)));
    sample.set_instance(fmt::format("cg@{}", unit.id));
    sample.set_timestamp_ms(timestamp_ms);
    *sample.mutable_cgroup() = std::move(*memory);
    if (limits_ != nullptr) {
      if (std::optional<drip::v1::MemoryLimit> limit = limits_->LimitOf(unit.path)) {
        *sample.mutable_limit() = std::move(*limit);
      }
    }
    ++sampled;
  }
  units_last_pass_ = sampled;
}

}  // namespace drip::agent
