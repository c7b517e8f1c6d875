#include "common/snapshot/heap_snapshot_validation.h"

#include <cmath>
#include <string>
#include <unordered_map>

#include "common/base/status_macros.h"
#include "fmt/format.h"

namespace drip {
namespace {

class Checker {
 public:
  explicit Checker(std::string_view source) : source_(source) {}

  absl::Status Error(const std::string& path, const std::string& what) const {
    return absl::InvalidArgumentError(fmt::format("{}: {}: {}", source_, path, what));
  }

  absl::Status NonNegative(const std::string& path, int64_t value) const {
    if (value < 0) return Error(path, fmt::format("must not be negative (got {})", value));
    return absl::OkStatus();
  }

  absl::Status FiniteNonNegative(const std::string& path, double value) const {
    if (!std::isfinite(value) || value < 0) {
      return Error(path, fmt::format("must be a finite non-negative number (got {})", value));
    }
    return absl::OkStatus();
  }

  // Read-outs must be in strictly increasing time: the diagnoser fits slopes over them.
  absl::Status After(const std::string& path, int64_t t, int64_t previous) const {
    if (t <= previous) {
      return Error(path, fmt::format("{} is not after the previous point's {} (times must "
                                     "strictly increase)",
                                     t, previous));
    }
    return absl::OkStatus();
  }

 private:
  std::string_view source_;
};

absl::Status CheckStack(const Checker& c, const SnapshotStack& stack, const std::string& path) {
  for (size_t j = 0; j < stack.frames.size(); ++j) {
    if (stack.frames[j].line < 0) {
      return c.Error(fmt::format("{}.frames[{}].line", path, j),
                     fmt::format("must not be negative (got {})", stack.frames[j].line));
    }
  }
  for (size_t j = 0; j < stack.series.size(); ++j) {
    const LivePoint& p = stack.series[j];
    const std::string point = fmt::format("{}.series[{}]", path, j);
    // Unix times: a negative one is nonsense, and one far below zero would overflow the
    // diagnoser's time differences.
    RETURN_IF_ERROR(c.NonNegative(point + ".t_ms", p.t_ms));
    if (j > 0) RETURN_IF_ERROR(c.After(point + ".t_ms", p.t_ms, stack.series[j - 1].t_ms));
    RETURN_IF_ERROR(c.NonNegative(point + ".live_bytes", p.live_bytes));
    RETURN_IF_ERROR(c.NonNegative(point + ".live_allocs", p.live_allocs));
  }
  RETURN_IF_ERROR(c.NonNegative(path + ".sampled_allocs", stack.sampled_allocs));
  RETURN_IF_ERROR(c.NonNegative(path + ".sampled_frees", stack.sampled_frees));
  RETURN_IF_ERROR(c.NonNegative(path + ".allocated_bytes", stack.allocated_bytes));
  RETURN_IF_ERROR(c.NonNegative(path + ".freed_bytes", stack.freed_bytes));
  RETURN_IF_ERROR(c.NonNegative(path + ".first_alloc_ms", stack.first_alloc_ms));
  RETURN_IF_ERROR(c.NonNegative(path + ".last_alloc_ms", stack.last_alloc_ms));
  if (stack.first_alloc_ms != 0 && stack.last_alloc_ms != 0 &&
      stack.first_alloc_ms > stack.last_alloc_ms) {
    return c.Error(
        path + ".first_alloc_ms",
        fmt::format("{} is after last_alloc_ms {}", stack.first_alloc_ms, stack.last_alloc_ms));
  }
  if (stack.cohorts.size() > kMaxAllocationCohorts) {
    return c.Error(path + ".cohorts", fmt::format("{} slices, at most {}", stack.cohorts.size(),
                                                  kMaxAllocationCohorts));
  }
  for (size_t j = 0; j < stack.cohorts.size(); ++j) {
    const AllocationCohort& cohort = stack.cohorts[j];
    const std::string at = fmt::format("{}.cohorts[{}]", path, j);
    RETURN_IF_ERROR(c.NonNegative(at + ".allocs", cohort.allocs));
    RETURN_IF_ERROR(c.NonNegative(at + ".live", cohort.live));
    if (cohort.live > cohort.allocs) {
      return c.Error(at + ".live", fmt::format("{} is more than the slice's allocs {}", cohort.live,
                                               cohort.allocs));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateHeapSnapshot(const HeapSnapshot& s, std::string_view source_name) {
  const Checker c(source_name);
  if (s.version != HeapSnapshot::kVersion) {
    return c.Error("version", fmt::format("{} is not supported (this build reads version {})",
                                          s.version, HeapSnapshot::kVersion));
  }
  if (s.mode != "attach" && s.mode != "preload") {
    return c.Error("mode", fmt::format("unknown mode \"{}\" (expected attach or preload)", s.mode));
  }
  if (s.target.pid <= 0) {
    return c.Error("target.pid",
                   fmt::format("must be a process id above 0 (got {})", s.target.pid));
  }
  RETURN_IF_ERROR(c.NonNegative("target.start_time_ms", s.target.start_time_ms));
  RETURN_IF_ERROR(c.FiniteNonNegative("target.expected_growth_bytes_per_hour",
                                      s.target.expected_growth_bytes_per_hour));
  RETURN_IF_ERROR(c.NonNegative("window.start_ms", s.start_ms));
  if (s.end_ms < s.start_ms) {
    return c.Error("window.end_ms",
                   fmt::format("{} is before window.start_ms {}", s.end_ms, s.start_ms));
  }
  if (!std::isfinite(s.interval_seconds) || s.interval_seconds <= 0) {
    return c.Error(
        "window.interval_seconds",
        fmt::format("must be a positive number of seconds (got {})", s.interval_seconds));
  }
  RETURN_IF_ERROR(c.FiniteNonNegative("duty_cycle.cpu_budget", s.duty_cycle.cpu_budget));
  RETURN_IF_ERROR(
      c.FiniteNonNegative("duty_cycle.probe_hit_cost_ns", s.duty_cycle.probe_hit_cost_ns));
  for (const auto& [field, value] :
       {std::pair{"duty_cycle.on_fraction", s.duty_cycle.on_fraction},
        std::pair{"duty_cycle.free_on_fraction", s.duty_cycle.free_on_fraction}}) {
    RETURN_IF_ERROR(c.FiniteNonNegative(field, value));
    if (value > 1) return c.Error(field, fmt::format("must be between 0 and 1 (got {})", value));
  }
  if (s.reused_address_frees > s.matched_frees) {
    return c.Error("events.reused_address_frees",
                   fmt::format("{} is more than the {} matched frees it is part of",
                               s.reused_address_frees, s.matched_frees));
  }
  if (s.lost_while_behind > s.dropped_events) {
    return c.Error("events.lost_while_behind",
                   fmt::format("{} is more than the {} dropped events it is part of",
                               s.lost_while_behind, s.dropped_events));
  }
  RETURN_IF_ERROR(c.FiniteNonNegative("duty_cycle.estimated_cpu_fraction",
                                      s.duty_cycle.estimated_cpu_fraction));

  // A list of entry point names: a few dozen short names at most.
  if (s.unsampled_calls.size() > kMaxUnsampledCalls) {
    return c.Error(
        "events.unsampled_calls",
        fmt::format("{} names, at most {}", s.unsampled_calls.size(), kMaxUnsampledCalls));
  }
  for (size_t i = 0; i < s.unsampled_calls.size(); ++i) {
    const std::string& name = s.unsampled_calls[i];
    if (name.empty() || name.size() > kMaxUnsampledCallName) {
      return c.Error(fmt::format("events.unsampled_calls[{}]", i),
                     fmt::format("must be a name of 1 to {} bytes (got {})", kMaxUnsampledCallName,
                                 name.size()));
    }
  }

  for (size_t i = 0; i < s.rss.size(); ++i) {
    const RssPoint& p = s.rss[i];
    const std::string path = fmt::format("rss[{}]", i);
    RETURN_IF_ERROR(c.NonNegative(path + ".t_ms", p.t_ms));
    if (i > 0) RETURN_IF_ERROR(c.After(path + ".t_ms", p.t_ms, s.rss[i - 1].t_ms));
    RETURN_IF_ERROR(c.NonNegative(path + ".rss_bytes", p.rss_bytes));
    RETURN_IF_ERROR(c.NonNegative(path + ".anon_bytes", p.anon_bytes));
  }

  std::unordered_map<uint64_t, size_t> index_of_id;
  index_of_id.reserve(s.stacks.size());
  for (size_t i = 0; i < s.stacks.size(); ++i) {
    const std::string path = fmt::format("stacks[{}]", i);
    auto [it, inserted] = index_of_id.emplace(s.stacks[i].id, i);
    if (!inserted) {
      return c.Error(path + ".id", fmt::format("{} repeats stacks[{}].id (ids must be unique)",
                                               s.stacks[i].id, it->second));
    }
    RETURN_IF_ERROR(CheckStack(c, s.stacks[i], path));
  }
  return absl::OkStatus();
}

}  // namespace drip
