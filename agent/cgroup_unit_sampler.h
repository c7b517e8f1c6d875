// CgroupUnitSampler: one sample per systemd unit (service or scope) from its cgroup's
// memory accounting — what the unit's processes hold together, plus the kernel memory
// charged to it (slab, socket buffers) that no per-process counter shows. Units are the
// natural components of a host: every host's nginx.service is one series whatever its
// PIDs do.
//
// Components are "svc:<unit>.service" (the same as the unit's processes, so one
// component carries both views) and "scope:<unit>.scope". The instance is
// "cg@<cgroup id>": systemd creates a new cgroup each time a unit starts, so a restart
// is a new instance, as it is for a process.
//
// Figures come from cgroup v2 (memory.current, memory.stat, memory.swap.current) or,
// on hybrid and legacy hosts, from the v1 memory controller (memory.usage_in_bytes,
// memory.stat's total_* lines, memory.kmem.*), whichever hierarchy has the controller.
// Where no hierarchy has it (cgroup v2 without the memory controller delegated, as in
// some containers), a unit's figures are the sum of its processes' /proc figures: anon,
// shmem and swap, with current = RSS; kernel, slab and socket memory stay 0 there.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/cgroup_limit_reader.h"
#include "agent/cgroup_tree.h"
#include "drip/v1/sample.pb.h"

namespace drip::agent {

class CgroupUnitSampler {
 public:
  // `proc_root` is read only for hierarchies without the memory controller.
  explicit CgroupUnitSampler(CgroupMount memory_hierarchy, std::string proc_root = "/proc");

  // Appends one sample per readable unit, stamped `timestamp_ms`. Units that vanish
  // mid-read are skipped; others that cannot be read are counted in errors().
  void AppendSamples(int64_t timestamp_ms, std::vector<drip::v1::Sample>* out);

  // The figures of one cgroup directory (absolute path); for tests and the above.
  absl::StatusOr<drip::v1::CgroupMemory> ReadCgroup(const std::string& dir) const;

  // Parsers of the two memory.stat dialects, pure for tests.
  static void ParseV2Stat(std::string_view text, drip::v1::CgroupMemory* out);
  static void ParseV1Stat(std::string_view text, drip::v1::CgroupMemory* out);

  const CgroupMount& hierarchy() const { return hierarchy_; }
  // Where to read each unit's memory limit and OOM kills; null: none is read.
  void set_limit_reader(CgroupLimitReader* limits) { limits_ = limits; }
  uint64_t units_last_pass() const { return units_last_pass_; }
  uint64_t errors() const { return errors_; }

 private:
  absl::StatusOr<drip::v1::CgroupMemory> SumProcesses(const std::string& dir) const;

  CgroupMount hierarchy_;
  std::string proc_root_;
  CgroupTree tree_;
  CgroupLimitReader* limits_ = nullptr;
  uint64_t units_last_pass_ = 0;
  uint64_t errors_ = 0;
};

}  // namespace drip::agent
