// MitigationPolicy: what the collector may do about a leak, per component (docs/design.md,
// "Report and mitigate"). The defaults are deliberately timid: manual mode, recommend
// only, dry-run, one host in ten at most. An operator opts a component in to automatic
// restarts once its leak and its restart behaviour are understood. Read from the
// collector's `mitigation:` section (docs/configuration.md); a value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/base/config_reader.h"
#include "common/base/mitigation_action.h"

namespace drip::collector {

struct MitigationPolicy {
  // manual: only dripctl mitigate acts; automatic: the collector acts on its own on hosts
  // whose ETA to OOM falls below trigger_eta.
  bool automatic = false;
  std::string action = std::string(mitigation_action::kRecommend);
  int signal = 15;  // SIGTERM, for signal-process
  // Automatic actions are sent as dry-runs (the agent checks and says what it would do)
  // until an operator sets dry_run: false for the component.
  bool dry_run = true;
  std::chrono::milliseconds trigger_eta = std::chrono::hours(6);
  // Never more than this fraction of the component's hosts (at least one) mitigated
  // within one cool-down: a bad restart must not take a whole service down.
  double max_host_fraction = 0.1;
  // A host is not mitigated again for the same component before this has passed.
  std::chrono::milliseconds cooldown = std::chrono::hours(1);
};

struct MitigationConfig {
  MitigationPolicy defaults;
  std::map<std::string, MitigationPolicy> components;  // component -> its policy
  // Across the whole fleet: at most this many actions (dry-runs included) per hour.
  uint64_t max_actions_per_hour = 20;
  // An action the agent has not answered within this counts as timed-out.
  std::chrono::milliseconds result_timeout = std::chrono::seconds(60);

  const MitigationPolicy& For(const std::string& component) const;
};

// Reads `mitigation.default.*`, `mitigation.components` (a list of mappings, each with a
// `component:` and any policy key, starting from the defaults), and the fleet-wide keys.
absl::Status ReadMitigationConfig(ConfigReader& reader, MitigationConfig* out);

}  // namespace drip::collector
