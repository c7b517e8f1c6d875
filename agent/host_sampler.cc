#include "agent/host_sampler.h"

#include <algorithm>

#include "common/daemon/logging.h"
#include "common/rpc/sample_figures.h"

namespace drip::agent {

HostSampler::HostSampler(std::unique_ptr<Sampler> processes, std::string fallback_reason,
                         std::unique_ptr<CgroupUnitSampler> units,
                         std::unique_ptr<SlabSampler> slab, uint64_t max_entities,
                         const Clock* clock)
    : processes_(std::move(processes)),
      name_(processes_->name()),
      fallback_reason_(std::move(fallback_reason)),
      units_(std::move(units)),
      slab_(std::move(slab)),
      max_entities_(max_entities),
      clock_(clock) {}

void HostSampler::ReadLimitsWith(std::unique_ptr<CgroupLimitReader> limits,
                                 uint64_t host_swap_bytes) {
  limits_ = std::move(limits);
  host_swap_bytes_ = host_swap_bytes;
  processes_->set_limit_reader(limits_.get());
  if (units_) units_->set_limit_reader(limits_.get());
}

absl::StatusOr<std::vector<drip::v1::Sample>> HostSampler::SampleOnce() {
  const auto started = std::chrono::steady_clock::now();
  PassStats stats;
  if (limits_) limits_->BeginPass(host_swap_bytes_);
  absl::StatusOr<std::vector<drip::v1::Sample>> processes = processes_->SampleOnce();
  if (!processes.ok()) return processes.status();
  for (const drip::v1::Sample& s : *processes) {
    if (s.memory_case() == drip::v1::Sample::kProcessExit) ++stats.exits;
  }
  stats.processes = processes->size() - stats.exits;

  std::vector<drip::v1::Sample> others;
  const int64_t now_ms = clock_->NowMs();
  if (units_) {
    units_->AppendSamples(now_ms, &others);
    stats.units = others.size();
  }
  if (slab_) {
    const size_t before = others.size();
    absl::Status slab = slab_->AppendSamples(now_ms, &others);
    if (!slab.ok() && !slab_failing_) {
      Logger("agent")->warn("slab caches are not sampled: {} (logged again once it works)",
                            std::string(slab.message()));
    } else if (slab.ok() && slab_failing_) {
      Logger("agent")->info("slab caches are sampled again");
    }
    slab_failing_ = !slab.ok();
    stats.slab_caches = others.size() - before;
  }

  std::vector<drip::v1::Sample> samples = std::move(*processes);
  const uint64_t total = samples.size() + others.size();
  if (total > max_entities_) {
    // Exits first (cheap and final), then by size: the leak is among the big ones.
    std::sort(samples.begin(), samples.end(),
              [](const drip::v1::Sample& a, const drip::v1::Sample& b) {
                const bool a_exit = a.memory_case() == drip::v1::Sample::kProcessExit;
                const bool b_exit = b.memory_case() == drip::v1::Sample::kProcessExit;
                if (a_exit != b_exit) return a_exit;
                return UnreclaimableBytes(a) > UnreclaimableBytes(b);
              });
    const uint64_t room = max_entities_ > others.size() ? max_entities_ - others.size() : 0;
    if (others.size() > max_entities_) others.resize(max_entities_);
    if (samples.size() > room) samples.resize(room);
    stats.skipped = total - samples.size() - others.size();
    skipped_total_ += stats.skipped;
  }
  samples.insert(samples.end(), std::make_move_iterator(others.begin()),
                 std::make_move_iterator(others.end()));
  stats.duration = std::chrono::steady_clock::now() - started;
  last_pass_ = stats;
  return samples;
}

}  // namespace drip::agent
