// Small formatting helpers shared by the leak report commands (leaks list, leaks show),
// so a report's ETA and top frame read the same in the list and in the report (growth
// rates are FormatByteRate's, common/base/duration.h, as everywhere).
#pragma once

#include <cstdint>
#include <string>

#include "drip/v1/report.pb.h"

namespace drip::cli {

// FormatSpan of the report's shortest ETA, "-" when no host's memory size is known.
std::string FormatMinEta(const drip::v1::LeakReport& report);
std::string FormatHostEta(const drip::v1::LeakHost& host);
// What runs out first and its limit ("cgroup 2.0 GiB", "host 24.0 GiB", "-"), and what
// is left of it ("512.0 MiB"); with OOM kills, " (3 OOM kills)" after the limit. The
// suspects and leak report views say it the same way.
std::string FormatLimit(const std::string& limited_by, uint64_t limit_bytes, uint32_t oom_kills);
std::string FormatHeadroom(const std::string& limited_by, uint64_t headroom_bytes);
// The innermost frame of the report's first diagnosed stack, "-" before a diagnosis.
std::string ReportTopFrame(const drip::v1::LeakReport& report);
// The report's time values in milliseconds since the epoch, for FormatAgo.
inline int64_t SecondsToMs(int64_t seconds) { return seconds * 1000; }
// Severities on-call should not miss get emphasis at a terminal.
inline bool IsAlertSeverity(const std::string& severity) { return severity == "critical"; }

}  // namespace drip::cli
