// Small formatting helpers shared by the leak report commands (leaks list, leaks show),
// so a report's growth, ETA and top frame read the same in the list and in the report.
#pragma once

#include <cstdint>
#include <string>

#include "drip/v1/report.pb.h"

namespace drip::cli {

// "4.0 MiB/h"; negative rates (a shrinking host) print as 0 B/h.
std::string FormatGrowth(double bytes_per_hour);
// FormatSpan of the report's shortest ETA, "-" when no host's memory size is known.
std::string FormatMinEta(const drip::v1::LeakReport& report);
std::string FormatHostEta(const drip::v1::LeakHost& host);
// The innermost frame of the report's first diagnosed stack, "-" before a diagnosis.
std::string ReportTopFrame(const drip::v1::LeakReport& report);
// The report's time values in milliseconds since the epoch, for FormatAgo.
inline int64_t SecondsToMs(int64_t seconds) { return seconds * 1000; }
// Severities on-call should not miss get emphasis at a terminal.
inline bool IsAlertSeverity(const std::string& severity) { return severity == "critical"; }

}  // namespace drip::cli
