#include "agent/bpf_sampler.h"

#include <time.h>
#include <unistd.h>

#include <cstring>

#include "agent/cgroup_limit_reader.h"
#include "agent/component_namer.h"
#include "agent/proc_files.h"
#include "common/base/process_instance.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

std::string_view CString(const char* chars, size_t capacity) {
  return std::string_view(chars, strnlen(chars, capacity));
}

int64_t BootClockNs() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

uint64_t PagesToBytes(int64_t pages, int64_t page_size) {
  // Per-CPU counter drift can leave a counter a few pages below zero.
  return pages > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) : 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BpfSampler>> BpfSampler::Create(const Options& options,
                                                               const Clock* clock) {
  absl::StatusOr<int64_t> boot_time_s = StableBootTime(options.proc_root);
  if (!boot_time_s.ok()) return boot_time_s.status();
  std::string text;
  std::optional<CgroupMount> cgroup2;
  if (ReadProcFile(options.proc_root + "/self/mountinfo", &text).ok()) {
    cgroup2 = FindCgroup2Mount(text);
  }
  absl::StatusOr<std::unique_ptr<BpfTaskMonitor>> monitor = BpfTaskMonitor::Open(options.monitor);
  if (!monitor.ok()) return monitor.status();
  return std::unique_ptr<BpfSampler>(
      new BpfSampler(options, clock, std::move(*monitor), *boot_time_s, std::move(cgroup2)));
}

BpfSampler::BpfSampler(Options options, const Clock* clock, std::unique_ptr<BpfTaskMonitor> monitor,
                       int64_t boot_time_s, std::optional<CgroupMount> cgroup2)
    : options_(std::move(options)),
      clock_(clock),
      monitor_(std::move(monitor)),
      boot_time_s_(boot_time_s),
      proc_fallback_(options_.proc_root, clock),
      namer_(options_.proc_root),
      page_size_(sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096) {
  // Hybrid hosts name processes by the v2 tree too: systemd mirrors its units there.
  if (cgroup2) cgroup_tree_.emplace(cgroup2->path);
}

std::string BpfSampler::InstanceOf(uint32_t tgid, uint64_t start_boottime_ns) const {
  // The same instant ProcSampler derives from /proc/PID/stat's starttime ticks.
  return FormatProcessInstance(
      static_cast<int>(tgid),
      boot_time_s_ + static_cast<int64_t>(start_boottime_ns / 1'000'000'000));
}

void BpfSampler::set_limit_reader(CgroupLimitReader* limits) {
  limits_ = limits;
  proc_fallback_.set_limit_reader(limits);
  memcg_tree_.reset();
  if (limits != nullptr && !limits->hierarchy().v2) memcg_tree_.emplace(limits->hierarchy().path);
}

std::optional<drip::v1::MemoryLimit> BpfSampler::LimitOf(uint64_t memcg_id) {
  if (limits_ == nullptr || memcg_id == 0) return std::nullopt;
  CgroupTree* tree = memcg_tree_ ? &*memcg_tree_ : cgroup_tree_ ? &*cgroup_tree_ : nullptr;
  if (tree == nullptr) return std::nullopt;
  const std::optional<std::string> path = tree->PathOf(memcg_id, generation_);
  if (!path) return std::nullopt;
  return limits_->LimitOf(*path);
}

std::string BpfSampler::CgroupPathOf(uint64_t cgroup_id) {
  if (!cgroup_tree_) return "";
  return cgroup_tree_->PathOf(cgroup_id, generation_).value_or("");
}

void BpfSampler::HandleEvent(const drip_task_event& event, int64_t now_ms, int64_t boot_now_ns,
                             std::vector<drip::v1::Sample>* out) {
  const InstanceKey key{event.tgid, event.start_boottime_ns};
  if (event.kind == DRIP_EVENT_FORK || event.kind == DRIP_EVENT_EXEC) {
    component_next_[key] = namer_.ComponentOfTask(
        static_cast<int>(event.tgid), CgroupPathOf(event.cgroup_id),
        CString(event.exe, sizeof(event.exe)), CString(event.comm, sizeof(event.comm)));
    return;
  }
  if (event.kind != DRIP_EVENT_EXIT) return;
  std::string component;
  if (auto it = component_next_.find(key); it != component_next_.end()) {
    component = std::move(it->second);
    component_next_.erase(it);
  } else if (auto old = component_of_.find(key); old != component_of_.end()) {
    component = old->second;
  } else {
    // Started before the agent and exited before its first pass: comm is all there is.
    component = ComponentNamer::ComponentFromNames(CgroupPathOf(event.cgroup_id), "",
                                                   CString(event.comm, sizeof(event.comm)));
  }
  component_of_.erase(key);
  drip::v1::Sample& sample = out->emplace_back();
  sample.set_component(std::move(component));
  sample.set_instance(InstanceOf(event.tgid, event.start_boottime_ns));
  const int64_t age_ms = std::max<int64_t>(
      0, (boot_now_ns - static_cast<int64_t>(event.timestamp_boot_ns)) / 1'000'000);
  sample.set_timestamp_ms(now_ms - age_ms);
  sample.mutable_process_exit()->set_peak_rss_bytes(
      PagesToBytes(static_cast<int64_t>(event.peak_rss_pages), page_size_));
  sample.mutable_process_exit()->set_wait_status(event.exit_code);
  sample.mutable_process_exit()->set_oom_killed(event.oom_victim != 0);
}

absl::StatusOr<std::vector<drip::v1::Sample>> BpfSampler::SampleOnce() {
  ++generation_;
  const int64_t now_ms = clock_->NowMs();
  const int64_t boot_now_ns = BootClockNs();
  PassStats stats;
  std::vector<drip::v1::Sample> samples;

  // Events first: names from fork/exec, then exits in the order they happened.
  absl::StatusOr<size_t> drained = monitor_->DrainEvents(
      [&](const drip_task_event& event) { HandleEvent(event, now_ms, boot_now_ns, &samples); });
  if (!drained.ok()) return drained.status();
  stats.events = *drained;
  stats.exits = samples.size();

  if (absl::Status read = monitor_->ReadTasks(&records_); !read.ok()) return read;
  samples.reserve(samples.size() + records_.size() + 1);
  bool saw_init = false;
  for (const drip_task_record& r : records_) {
    saw_init |= r.tgid == 1;
    drip::v1::Sample& sample = samples.emplace_back();
    const InstanceKey key{r.tgid, r.start_boottime_ns};
    std::string component =
        namer_.ComponentOfTask(static_cast<int>(r.tgid), CgroupPathOf(r.cgroup_id),
                               CString(r.exe, sizeof(r.exe)), CString(r.comm, sizeof(r.comm)));
    component_next_[key] = component;
    sample.set_component(std::move(component));
    sample.set_instance(InstanceOf(r.tgid, r.start_boottime_ns));
    sample.set_timestamp_ms(now_ms);
    drip::v1::ProcessMemory* m = sample.mutable_process();
    m->set_anon_rss_bytes(PagesToBytes(r.pages[DRIP_MM_ANONPAGES], page_size_));
    m->set_file_rss_bytes(PagesToBytes(r.pages[DRIP_MM_FILEPAGES], page_size_));
    m->set_shmem_rss_bytes(PagesToBytes(r.pages[DRIP_MM_SHMEMPAGES], page_size_));
    m->set_swap_bytes(PagesToBytes(r.pages[DRIP_MM_SWAPENTS], page_size_));
    if (std::optional<drip::v1::MemoryLimit> limit = LimitOf(r.memcg_id)) {
      *sample.mutable_limit() = std::move(*limit);
    }
  }
  stats.processes = records_.size();
  if (!saw_init) {
    absl::StatusOr<bool> init = proc_fallback_.SamplePid(1, now_ms, &samples);
    if (init.ok() && *init) ++stats.processes;
  }
  // Names for the next pass's exits: every process alive now, plus those that
  // events named and that have not exited yet.
  component_of_.swap(component_next_);
  component_next_.clear();
  stats.lost_events = monitor_->lost_events();
  if (stats.lost_events > last_pass_.lost_events) {
    Logger("agent")->warn(
        "bpf sampler: {} process events lost (ring buffer full: a fork storm); short-lived "
        "processes among them are not reported",
        stats.lost_events - last_pass_.lost_events);
  }
  last_pass_ = stats;
  return samples;
}

}  // namespace drip::agent
