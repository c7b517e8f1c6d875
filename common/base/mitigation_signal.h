// The signals a signal-process mitigation may send, shared by the collector's policy,
// dripctl's --signal and their docs, so all three accept exactly the same set: signals
// that end a process or ask it to drop memory, never job control (STOP, CONT) or faults.
// Numbers are Linux's, the same on every architecture Drip builds for.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace drip {

// "SIGTERM", "TERM", "term" or "15" -> 15. The error lists what is accepted.
absl::StatusOr<int> ParseMitigationSignal(std::string_view text);

// 15 -> "SIGTERM"; the number as text for a signal outside the set.
std::string MitigationSignalName(int signal);

}  // namespace drip
