// ReportState: the one spelling of a leak report's states (docs/runbook.md). Code reasons
// with the enum drip.v1.ReportState; the wire, the store and dripctl's JSON carry its name
// in LeakReport.state ("open", "acknowledged", "mitigated", "resolved"), as they always
// have, so that stored reports and scripts reading --json keep working. This is the one
// place that maps between the two.
#pragma once

#include <string>
#include <string_view>

#include "drip/v1/report.pb.h"

namespace drip {

// "open", "acknowledged", "mitigated", "resolved"; "" for REPORT_STATE_UNSPECIFIED.
std::string_view ReportStateName(drip::v1::ReportState state);
// The state `name` spells; REPORT_STATE_UNSPECIFIED for anything else.
drip::v1::ReportState ParseReportState(std::string_view name);

inline drip::v1::ReportState ReportStateOf(const drip::v1::LeakReport& report) {
  return ParseReportState(report.state());
}
inline void SetReportState(drip::v1::LeakReport* report, drip::v1::ReportState state) {
  report->set_state(std::string(ReportStateName(state)));
}

}  // namespace drip
