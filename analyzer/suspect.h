// Suspect: one (host, component) the detector believes leaks, with the evidence an
// on-call engineer needs to believe it too. ComponentSuspect: the fleet view of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace drip::analyzer {

// Which rule flagged a series; each has its own explanation in the reason.
enum class SuspectRule {
  kClimbAboveNormal,  // left its established normal range upward and keeps climbing
  kYoungClimb,        // no trusted range yet, but a long or large linear climb
  kFleetDrift,        // climbing with many hosts of the same component at once
  kRestartReset,      // grows in every instance until it is restarted
  kDailyClimb,        // every hour of its daily cycle higher than the day before, two days
  kApproachingLimit,  // a steady climb that reaches its memory limit soon: little time to wait
  kOomKilled,         // instances that grew until the kernel OOM-killed them, again and again
};

const char* SuspectRuleName(SuspectRule rule);
// The rule SuspectRuleName spells `name`; nullopt for a name this build does not know.
std::optional<SuspectRule> SuspectRuleFromName(std::string_view name);

struct Suspect {
  std::string host;
  std::string component;
  std::string instance;       // the instance flagged (latest one while it grows)
  int64_t first_flagged = 0;  // timestamp (s) of the sample that first flagged it
  int64_t last_updated = 0;   // timestamp (s) of the latest sample seen for it
  // When the growth judged began (s): the first point of the climb the rule read (the
  // floor leaving its normal range, or the instance's climb after its start-up), or the
  // instance's start for the restart-reset rule. What the rollout correlation compares
  // with a version change.
  int64_t growth_since = 0;
  double growth_bytes_per_hour = 0;
  double score = 0;            // 0..1: how sure the detector is
  uint64_t current_bytes = 0;  // the floor level now
  uint64_t normal_bytes = 0;   // the level the series normally sits at (its pivot)
  // What runs out first: the memory limit of the series' cgroup ("cgroup") or the host's
  // memory ("host"); empty when neither is known. `limit_bytes` is that limit, and
  // `headroom_bytes` what is left of it above the floor now.
  std::string limited_by;
  uint64_t limit_bytes = 0;
  uint64_t headroom_bytes = 0;
  // Time until the series reaches that limit at this growth (the kernel's OOM killer acts
  // there); nullopt when no limit is known.
  std::optional<double> eta_to_oom_seconds;
  // OOM kills of the series' instances since the detector first saw it.
  uint32_t oom_kills = 0;
  SuspectRule rule = SuspectRule::kClimbAboveNormal;
  std::string reason;
};

struct ComponentSuspect {
  std::string component;
  int64_t first_flagged = 0;
  int hosts = 0;       // hosts of this component with a suspect
  int hosts_seen = 0;  // hosts of this component the detector has seen
  double max_growth_bytes_per_hour = 0;
};

}  // namespace drip::analyzer
