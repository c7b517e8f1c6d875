// LimitReading: what the kernel enforces on one series, as its agent read it with a
// sample — the memory limit it is OOM-killed at and the kills so far. The detector asks
// for less evidence the closer a series is to its limit, and takes instances that grew
// until they were OOM-killed as evidence of a leak (docs/detector.md).
#pragma once

#include <cstdint>
#include <optional>

namespace drip::analyzer {

// What the kernel enforces on a series, read with one of its samples.
struct LimitReading {
  // The memory limit the series runs under: its cgroup's, or the nearest limited
  // ancestor's. 0 when it has none, and the host's memory (SetHostMemory) is what runs out.
  uint64_t limit_bytes = 0;
  // The kernel's cumulative count of OOM kills in that cgroup, when reported: a rise is a
  // kill; a lower value is a cgroup made anew (a unit restarted), counting from zero.
  std::optional<uint64_t> oom_kills;
};

}  // namespace drip::analyzer
