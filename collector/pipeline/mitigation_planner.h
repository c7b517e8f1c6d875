// MitigationPlanner: which hosts of a leak report a mitigation may touch now, under the
// component's policy (docs/design.md: rate-limited, never more than a bounded fraction of a
// component's hosts at once, cool-down). Pure: the report, the policy, the time and the
// fleet-wide budget in, a plan out, so every limit is unit-tested without a collector.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collector/pipeline/mitigation_policy.h"
#include "drip/v1/report.pb.h"

namespace drip::collector {

struct MitigationTarget {
  std::string host;
  std::string instance;
  // What the agent is told: the unit for restart-unit, the pid for signal-process.
  std::string unit;
  int pid = 0;
  std::string description;  // "leaky.service", "pid 1234 (1234@5678) SIGTERM"
};

struct SkippedHost {
  std::string host;
  std::string reason;
};

struct MitigationPlan {
  std::vector<MitigationTarget> targets;  // most urgent first
  std::vector<SkippedHost> skipped;       // with why, for the audit log
};

struct MitigationRequestSpec {
  std::string action;
  bool dry_run = true;
  bool automatic = false;  // only hosts under the policy's trigger_eta
  std::string only_host;   // empty: any host of the report
  int signal = 15;
};

// Plans `spec` for `report` at `now_ms` with at most `fleet_budget` actions left in the
// fleet-wide hourly limit. Records in report.mitigations() within the policy's
// cool-down (of the same dry-run kind, and not merely recommended) count against the
// host's cool-down and the component's host fraction.
MitigationPlan PlanMitigation(const drip::v1::LeakReport& report, const MitigationPolicy& policy,
                              const MitigationRequestSpec& spec, int64_t now_ms,
                              uint64_t fleet_budget);

}  // namespace drip::collector
