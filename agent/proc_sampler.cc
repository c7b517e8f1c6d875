#include "agent/proc_sampler.h"

#include <dirent.h>
#include <errno.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "agent/cgroup_limit_reader.h"
#include "agent/proc_files.h"
#include "common/base/process_instance.h"
#include "common/base/strings.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

// PID directories of `proc_root`, in directory order.
absl::StatusOr<std::vector<int>> ListPids(const std::string& proc_root) {
  DIR* dir = opendir(proc_root.c_str());
  if (dir == nullptr) {
    return absl::UnavailableError(
        fmt::format("{}: cannot list processes: {}", proc_root, std::strerror(errno)));
  }
  std::vector<int> pids;
  while (dirent* entry = readdir(dir)) {
    int pid = 0;
    if (ParseNumber(std::string_view(entry->d_name), &pid) && pid > 0) pids.push_back(pid);
  }
  closedir(dir);
  return pids;
}

}  // namespace

ProcSampler::ProcSampler(std::string proc_root, const Clock* clock)
    : proc_root_(std::move(proc_root)),
      clock_(clock),
      namer_(proc_root_),
      ticks_per_second_(sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100) {}

absl::Status ProcSampler::EnsureBootTime() {
  if (boot_time_s_ != 0) return absl::OkStatus();
  absl::StatusOr<int64_t> btime = StableBootTime(proc_root_);
  if (!btime.ok()) return btime.status();
  boot_time_s_ = *btime;
  return absl::OkStatus();
}

absl::StatusOr<bool> ProcSampler::SamplePid(int pid, int64_t timestamp_ms,
                                            std::vector<drip::v1::Sample>* out) {
  if (absl::Status boot = EnsureBootTime(); !boot.ok()) return boot;
  PassStats stats;
  std::string error;
  SampleProcess(pid, timestamp_ms, boot_time_s_, out, &stats, &error);
  if (stats.errors > 0) return absl::InternalError(error);
  return stats.sampled > 0;
}

absl::StatusOr<std::vector<drip::v1::Sample>> ProcSampler::SampleOnce() {
  if (absl::Status boot = EnsureBootTime(); !boot.ok()) return boot;

  absl::StatusOr<std::vector<int>> pids = ListPids(proc_root_);
  if (!pids.ok()) return pids.status();

  const int64_t now_ms = clock_->NowMs();
  PassStats stats;
  stats.processes = pids->size();
  std::vector<drip::v1::Sample> samples;
  samples.reserve(pids->size());
  std::string first_error;
  for (int pid : *pids) SampleProcess(pid, now_ms, boot_time_s_, &samples, &stats, &first_error);

  errors_total_ += stats.errors;
  auto log = Logger("agent");
  if (stats.errors > 0 && !in_error_episode_) {
    log->warn(
        "proc sampler: {} of {} processes could not be read and are left out (first: {}); "
        "further passes with errors are logged at debug until one has none",
        stats.errors, stats.processes, first_error);
    in_error_episode_ = true;
  } else if (stats.errors > 0) {
    log->debug("proc sampler: {} processes could not be read (first: {})", stats.errors,
               first_error);
  } else if (in_error_episode_) {
    log->info("proc sampler: every process readable again");
    in_error_episode_ = false;
  }
  log->trace("proc sampler: {} processes, {} sampled, {} vanished, {} without mm, {} errors",
             stats.processes, stats.sampled, stats.vanished, stats.no_mm, stats.errors);
  last_pass_ = stats;
  return samples;
}

void ProcSampler::SampleProcess(int pid, int64_t now_ms, int64_t boot_time_s,
                                std::vector<drip::v1::Sample>* out, PassStats* stats,
                                std::string* first_error) {
  const std::string dir = fmt::format("{}/{}", proc_root_, pid);
  // NotFound anywhere means the process exited between listing and reading.
  auto failed = [&](const absl::Status& status) {
    if (absl::IsNotFound(status)) {
      ++stats->vanished;
      return;
    }
    ++stats->errors;
    if (first_error->empty()) *first_error = std::string(status.message());
  };

  absl::Status read = ReadProcFile(dir + "/status", &file_buffer_);
  if (!read.ok()) return failed(read);
  absl::StatusOr<ProcStatus> status = ParseProcStatus(file_buffer_);
  if (!status.ok()) {
    return failed(absl::InvalidArgumentError(
        fmt::format("{}/{}", dir, std::string(status.status().message()))));
  }
  if (!status->has_mm) {
    ++stats->no_mm;
    return;
  }

  read = ReadProcFile(dir + "/stat", &file_buffer_);
  if (!read.ok()) return failed(read);
  absl::StatusOr<ProcStat> stat = ParseProcStat(file_buffer_);
  if (!stat.ok()) {
    return failed(absl::InvalidArgumentError(
        fmt::format("{}/{}", dir, std::string(stat.status().message()))));
  }
  if (stat->state == 'Z' || stat->state == 'X') {
    ++stats->no_mm;
    return;
  }

  std::string cgroup;
  std::optional<drip::v1::MemoryLimit> limit;
  read = ReadProcFile(dir + "/cgroup", &file_buffer_);
  if (read.ok()) {
    cgroup = CgroupPathFromFile(file_buffer_);
    if (limits_ != nullptr) {
      limit = limits_->LimitOf(
          CgroupLimitReader::MemoryCgroupOf(file_buffer_, limits_->hierarchy().v2));
    }
  } else if (absl::IsNotFound(read)) {
    ++stats->vanished;
    return;
  }
  // Without a readable cgroup the process is still sampled, named by its executable.

  drip::v1::Sample& sample = out->emplace_back();
  sample.set_component(namer_.ComponentOf(pid, cgroup, stat->comm));
  const int64_t start_s = boot_time_s + static_cast<int64_t>(stat->start_ticks) / ticks_per_second_;
  sample.set_instance(FormatProcessInstance(pid, start_s));
  sample.set_timestamp_ms(now_ms);
  drip::v1::ProcessMemory* memory = sample.mutable_process();
  memory->set_anon_rss_bytes(status->anon_rss_bytes);
  memory->set_file_rss_bytes(status->file_rss_bytes);
  memory->set_shmem_rss_bytes(status->shmem_rss_bytes);
  memory->set_swap_bytes(status->swap_bytes);
  if (limit) *sample.mutable_limit() = std::move(*limit);
  ++stats->sampled;
}

}  // namespace drip::agent
