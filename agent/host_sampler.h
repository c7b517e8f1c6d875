// HostSampler: everything one pass reads on a host — processes (BPF or /proc), systemd
// units' cgroups and kernel slab caches — as one list of samples, held to the agent's
// per-pass cap. It is the Sampler the Agent runs; the factory (sampler_factory.h) builds
// it and decides which process sampler goes inside.
//
// The cap keeps whole kinds that are few and carry the most signal (exits, units, slab
// caches) and drops the smallest processes first: a leak is a big, growing process,
// and a fork storm of tiny ones must not make the agent expensive.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/cgroup_limit_reader.h"
#include "agent/cgroup_unit_sampler.h"
#include "agent/sampler.h"
#include "agent/slab_sampler.h"
#include "common/base/clock.h"

namespace drip::agent {

class HostSampler final : public Sampler {
 public:
  struct PassStats {
    uint64_t processes = 0;  // process samples (before the cap)
    uint64_t units = 0;
    uint64_t slab_caches = 0;
    uint64_t exits = 0;
    uint64_t skipped = 0;  // left out by the cap in this pass
    std::chrono::nanoseconds duration{0};
  };

  // `units` and `slab` may be null (turned off, or not available on this host).
  // `fallback_reason` says why `processes` is the /proc sampler when BPF was wanted.
  HostSampler(std::unique_ptr<Sampler> processes, std::string fallback_reason,
              std::unique_ptr<CgroupUnitSampler> units, std::unique_ptr<SlabSampler> slab,
              uint64_t max_entities, const Clock* clock);

  absl::StatusOr<std::vector<drip::v1::Sample>> SampleOnce() override;
  std::string name() const override { return name_; }

  std::string fallback_reason() const override { return fallback_reason_; }
  const PassStats& last_pass() const { return last_pass_; }
  uint64_t skipped_entities() const override { return skipped_total_; }
  uint64_t lost_events() const override { return processes_->lost_events(); }
  Sampler* process_sampler() const { return processes_.get(); }

  // Reads every process's and unit's memory limit and OOM kills from here on (docs/
  // agent.md); `host_swap_bytes` is the most swap any of them may use.
  void ReadLimitsWith(std::unique_ptr<CgroupLimitReader> limits, uint64_t host_swap_bytes);

 private:
  const std::unique_ptr<Sampler> processes_;
  const std::string name_;
  const std::string fallback_reason_;
  const std::unique_ptr<CgroupUnitSampler> units_;
  const std::unique_ptr<SlabSampler> slab_;
  const uint64_t max_entities_;
  const Clock* const clock_;
  std::unique_ptr<CgroupLimitReader> limits_;
  uint64_t host_swap_bytes_ = 0;
  PassStats last_pass_;
  uint64_t skipped_total_ = 0;
  bool slab_failing_ = false;
};

}  // namespace drip::agent
