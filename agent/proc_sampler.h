// ProcSampler: the portable sampler. Each pass lists the PID directories of the proc
// root and reads, per process, status (RssAnon, RssFile, RssShmem, VmSwap), stat
// (comm, start time) and cgroup (for the component, and the memory cgroup whose limit it
// runs under). Costs tens of µs per process,
// which is why the BPF sampler replaces it where the kernel allows (docs/design.md).
//
// Instances are "PID@START", START being the process start time in Unix seconds
// (boot time + starttime ticks), so a reused PID is a new instance.
//
// Races are normal: a process that exits mid-read is skipped silently. Anything else
// that stops one process from being read (permissions, malformed files) skips it too,
// but is counted and logged once per episode (when it starts and when it ends).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/component_namer.h"
#include "agent/sampler.h"
#include "common/base/clock.h"

namespace drip::agent {

class ProcSampler final : public Sampler {
 public:
  // What the last pass saw; for logs, tests and `drip-agent sample`.
  struct PassStats {
    uint64_t processes = 0;  // PID directories listed
    uint64_t sampled = 0;    // samples produced
    uint64_t vanished = 0;   // exited during the pass
    uint64_t no_mm = 0;      // kernel threads and zombies
    uint64_t errors = 0;     // could not be read or parsed
  };

  // `proc_root` is "/proc" in production; `clock` stamps samples and must outlive this.
  ProcSampler(std::string proc_root, const Clock* clock);

  absl::StatusOr<std::vector<drip::v1::Sample>> SampleOnce() override;
  std::string name() const override { return "proc"; }

  // Samples one process into `out` (false when it has exited or has no mm). For the
  // BPF sampler, which reads the few processes its iterator cannot see from here.
  absl::StatusOr<bool> SamplePid(int pid, int64_t timestamp_ms, std::vector<drip::v1::Sample>* out);

  void set_limit_reader(CgroupLimitReader* limits) override { limits_ = limits; }

  const PassStats& last_pass() const { return last_pass_; }
  uint64_t errors_total() const { return errors_total_; }

 private:
  absl::Status EnsureBootTime();  // reads btime on first use; it does not change
  // Appends pid's sample to `out`, or counts why there is none.
  void SampleProcess(int pid, int64_t now_ms, int64_t boot_time_s,
                     std::vector<drip::v1::Sample>* out, PassStats* stats,
                     std::string* first_error);

  const std::string proc_root_;
  const Clock* const clock_;
  const ComponentNamer namer_;
  const int64_t ticks_per_second_;
  CgroupLimitReader* limits_ = nullptr;
  int64_t boot_time_s_ = 0;  // StableBootTime, on the first pass
  PassStats last_pass_;
  uint64_t errors_total_ = 0;
  bool in_error_episode_ = false;
  std::string file_buffer_;  // reused across reads
};

}  // namespace drip::agent
