// The JSON form of leak reports and audit entries, as `dripctl leaks list/show/ack/
// resolve`, `dripctl mitigate` and `dripctl audit` print them (docs/dripctl.md). Keys
// are the proto field names (snake_case, units in the name: first_seen_s, time_ms),
// integers are JSON numbers (not strings as in proto3's JSON mapping), an unknown ETA is
// null, and top_stacks have the shape of `dripctl diagnose --json`'s stacks.
#pragma once

#include "drip/v1/report.pb.h"
#include "nlohmann/json.hpp"

namespace drip::cli {

nlohmann::ordered_json LeakReportToJson(const drip::v1::LeakReport& report);
nlohmann::ordered_json AuditEntryToJson(const drip::v1::AuditEntry& entry);

// Names and symbols come from the fleet's binaries: a stray non-UTF-8 byte must not
// throw, so every dump goes through this (invalid bytes become U+FFFD).
std::string DumpJson(const nlohmann::ordered_json& json);

}  // namespace drip::cli
