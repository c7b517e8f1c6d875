// BpfSampler: the agent's default process sampler. Each pass runs the BPF task iterator
// (every process's mm counters, comm, executable and cgroup, in one read loop; about a
// microsecond per process) and turns the lifecycle events the tracepoints queued since
// the last pass into samples:
//   - an exit becomes a ProcessExit sample at the moment of exit, so an instance's end is
//     recorded, and a process that lived shorter than one interval is reported once;
//   - fork and exec events name those short-lived processes (their executable) and
//     let a restart between two passes show as two instances.
//
// Components and instances are the ProcSampler's (same naming, same "PID@START" from
// the same kernel start time), so switching samplers keeps every series — except for
// executable names over 47 bytes (cut in the kernel record) and hosts without a cgroup2
// mount (no unit names: the kernel gives v2 cgroup ids only). The task iterator of some kernels
// skips the pid namespace's init (pid 1); it is read from /proc instead.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/bpf_task_monitor.h"
#include "agent/cgroup_tree.h"
#include "agent/component_namer.h"
#include "agent/proc_sampler.h"
#include "agent/sampler.h"
#include "common/base/clock.h"

namespace drip::agent {

class BpfSampler final : public Sampler {
 public:
  struct Options {
    std::string proc_root = "/proc";
    BpfTaskMonitor::Options monitor;
  };
  struct PassStats {
    uint64_t processes = 0;    // records from the iterator (plus pid 1 from /proc)
    uint64_t exits = 0;        // ProcessExit samples
    uint64_t events = 0;       // lifecycle events drained
    uint64_t lost_events = 0;  // since start: the ring buffer was full
  };

  // Loads and attaches the BPF programs; fails with the kernel's reason otherwise.
  static absl::StatusOr<std::unique_ptr<BpfSampler>> Create(const Options& options,
                                                            const Clock* clock);

  absl::StatusOr<std::vector<drip::v1::Sample>> SampleOnce() override;
  std::string name() const override { return "bpf"; }
  uint64_t lost_events() const override { return last_pass_.lost_events; }
  void set_limit_reader(CgroupLimitReader* limits) override;

  const PassStats& last_pass() const { return last_pass_; }

 private:
  struct InstanceKey {
    uint32_t tgid;
    uint64_t start_boottime_ns;
    bool operator==(const InstanceKey&) const = default;
  };
  struct InstanceKeyHash {
    size_t operator()(const InstanceKey& k) const {
      return std::hash<uint64_t>()(k.start_boottime_ns * 0x9e3779b97f4a7c15ull ^ k.tgid);
    }
  };

  BpfSampler(Options options, const Clock* clock, std::unique_ptr<BpfTaskMonitor> monitor,
             int64_t boot_time_s, std::optional<CgroupMount> cgroup2);

  std::string InstanceOf(uint32_t tgid, uint64_t start_boottime_ns) const;
  std::string CgroupPathOf(uint64_t cgroup_id);
  // The MemoryLimit of the memory cgroup with kernel id `memcg_id`, when a reader is set.
  std::optional<drip::v1::MemoryLimit> LimitOf(uint64_t memcg_id);
  void HandleEvent(const drip_task_event& event, int64_t now_ms, int64_t boot_now_ns,
                   std::vector<drip::v1::Sample>* out);

  const Options options_;
  const Clock* const clock_;
  const std::unique_ptr<BpfTaskMonitor> monitor_;
  const int64_t boot_time_s_;
  std::optional<CgroupTree> cgroup_tree_;  // the v2 (default) hierarchy, when mounted
  CgroupLimitReader* limits_ = nullptr;
  // The memory controller's hierarchy when it is not the v2 one (hybrid hosts: v1).
  std::optional<CgroupTree> memcg_tree_;
  ProcSampler proc_fallback_;  // for pid 1
  const ComponentNamer namer_;
  const int64_t page_size_;
  uint64_t generation_ = 0;
  // The component of each instance seen by the last pass or named by an event, to name
  // its exit; rebuilt every pass so it holds live processes only.
  std::unordered_map<InstanceKey, std::string, InstanceKeyHash> component_of_;
  std::unordered_map<InstanceKey, std::string, InstanceKeyHash> component_next_;
  std::vector<drip_task_record> records_;
  PassStats last_pass_;
};

}  // namespace drip::agent
