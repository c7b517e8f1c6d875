#include "agent/sampler_factory.h"

#include <optional>

#include "agent/bpf_sampler.h"
#include "agent/cgroup_limit_reader.h"
#include "agent/proc_files.h"
#include "agent/proc_sampler.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

// The hierarchy with the memory controller, for units and limits; nullopt (logged) when
// the host has no cgroup hierarchy to read.
std::optional<CgroupMount> FindMemoryCgroups(const AgentConfig& config) {
  std::string mountinfo;
  if (absl::Status read = ReadProcFile(config.proc_root + "/self/mountinfo", &mountinfo);
      !read.ok()) {
    Logger("agent")->warn("no cgroups read (units, memory limits): {}",
                          std::string(read.message()));
    return std::nullopt;
  }
  absl::StatusOr<CgroupMount> hierarchy =
      FindMemoryHierarchy(mountinfo, [](const std::string& path) -> std::optional<std::string> {
        std::string text;
        if (!ReadProcFile(path, &text).ok()) return std::nullopt;
        return text;
      });
  if (!hierarchy.ok()) {
    Logger("agent")->warn("no cgroups read (units, memory limits): {}",
                          std::string(hierarchy.status().message()));
    return std::nullopt;
  }
  return *hierarchy;
}

std::unique_ptr<CgroupUnitSampler> CreateUnitSampler(const AgentConfig& config,
                                                     const std::optional<CgroupMount>& hierarchy) {
  if (!config.sample_units || !hierarchy) return nullptr;
  Logger("agent")->info("systemd units: memory from cgroup {} at {}{}", hierarchy->v2 ? "v2" : "v1",
                        hierarchy->path,
                        hierarchy->memory ? "" : " (no memory controller: summed from processes)");
  return std::make_unique<CgroupUnitSampler>(*hierarchy, config.proc_root);
}

std::unique_ptr<SlabSampler> CreateSlabSampler(const AgentConfig& config) {
  if (!config.sample_slab) return nullptr;
  absl::StatusOr<int64_t> boot_time = StableBootTime(config.proc_root);
  if (!boot_time.ok()) {
    Logger("agent")->warn("slab caches are not sampled: no boot time in {}/stat", config.proc_root);
    return nullptr;
  }
  return std::make_unique<SlabSampler>(config.proc_root + "/slabinfo", *boot_time);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HostSampler>> CreateSampler(const AgentConfig& config,
                                                           const Clock* clock) {
  auto log = Logger("agent");
  std::unique_ptr<Sampler> processes;
  std::string fallback_reason;
  if (config.sampler == "bpf" || config.sampler == "auto") {
    BpfSampler::Options options;
    options.proc_root = config.proc_root;
    absl::StatusOr<std::unique_ptr<BpfSampler>> bpf = BpfSampler::Create(options, clock);
    if (bpf.ok()) {
      log->info("sampler: bpf (task iterator and sched_process tracepoints attached)");
      processes = std::move(*bpf);
    } else if (config.sampler == "bpf") {
      return absl::UnavailableError(fmt::format(
          "sampler: bpf was asked for but cannot run: {} (sampler: auto falls back to /proc)",
          std::string(bpf.status().message())));
    } else {
      fallback_reason = std::string(bpf.status().message());
      log->warn("sampler: proc, falling back from BPF: {}", fallback_reason);
    }
  } else if (config.sampler != "proc") {
    // AgentConfig refuses other values; reaching here means a caller built one by hand.
    return absl::InvalidArgumentError(
        fmt::format("sampler: '{}' is not one of auto, bpf, proc", config.sampler));
  } else {
    log->info("sampler: proc (reading {}, as configured)", config.proc_root);
  }
  if (!processes) processes = std::make_unique<ProcSampler>(config.proc_root, clock);
  const std::optional<CgroupMount> hierarchy = FindMemoryCgroups(config);
  auto sampler = std::make_unique<HostSampler>(
      std::move(processes), std::move(fallback_reason), CreateUnitSampler(config, hierarchy),
      CreateSlabSampler(config), config.max_entities, clock);
  if (hierarchy && hierarchy->memory) {
    // Swap a cgroup may use beyond its memory limit is at most the host's.
    std::string meminfo;
    uint64_t swap = 0;
    if (ReadProcFile(config.proc_root + "/meminfo", &meminfo).ok()) {
      swap = ParseMeminfoBytes(meminfo, "SwapTotal").value_or(0);
    }
    log->info("memory limits and OOM kills: from cgroup {} at {}", hierarchy->v2 ? "v2" : "v1",
              hierarchy->path);
    sampler->ReadLimitsWith(std::make_unique<CgroupLimitReader>(*hierarchy), swap);
  } else {
    log->warn(
        "memory limits and OOM kills are not read: no cgroup hierarchy has the memory "
        "controller; the host's memory is every entity's limit");
  }
  return sampler;
}

}  // namespace drip::agent
