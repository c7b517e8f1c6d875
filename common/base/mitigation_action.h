// The mitigation actions, as the collector's policies, dripctl and the agent spell them on
// the wire (drip.v1.MitigationCommand.action): one list, so that all three accept exactly
// the same set.
#pragma once

#include <algorithm>
#include <array>
#include <string_view>

namespace drip::mitigation_action {

// Restart the component's systemd unit (components "svc:NAME").
inline constexpr std::string_view kRestartUnit = "restart-unit";
// Send the leaking process a signal (common/base/mitigation_signal.h).
inline constexpr std::string_view kSignalProcess = "signal-process";
// Touch nothing; say what would help.
inline constexpr std::string_view kRecommend = "recommend";

inline constexpr std::array<std::string_view, 3> kAll = {kRestartUnit, kSignalProcess, kRecommend};

inline bool IsKnown(std::string_view action) {
  return std::find(kAll.begin(), kAll.end(), action) != kAll.end();
}

}  // namespace drip::mitigation_action
