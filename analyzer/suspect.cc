#include "analyzer/suspect.h"

namespace drip::analyzer {

const char* SuspectRuleName(SuspectRule rule) {
  switch (rule) {
    case SuspectRule::kClimbAboveNormal:
      return "climb_above_normal";
    case SuspectRule::kYoungClimb:
      return "young_climb";
    case SuspectRule::kFleetDrift:
      return "fleet_drift";
    case SuspectRule::kRestartReset:
      return "restart_reset";
    case SuspectRule::kDailyClimb:
      return "daily_climb";
    case SuspectRule::kApproachingLimit:
      return "approaching_limit";
    case SuspectRule::kOomKilled:
      return "oom_killed";
  }
  return "unknown";
}

std::optional<SuspectRule> SuspectRuleFromName(std::string_view name) {
  for (SuspectRule rule :
       {SuspectRule::kClimbAboveNormal, SuspectRule::kYoungClimb, SuspectRule::kFleetDrift,
        SuspectRule::kRestartReset, SuspectRule::kDailyClimb, SuspectRule::kApproachingLimit,
        SuspectRule::kOomKilled}) {
    if (name == SuspectRuleName(rule)) return rule;
  }
  return std::nullopt;
}

}  // namespace drip::analyzer
