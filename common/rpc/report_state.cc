#include "common/rpc/report_state.h"

namespace drip {

std::string_view ReportStateName(drip::v1::ReportState state) {
  switch (state) {
    case drip::v1::REPORT_STATE_OPEN:
      return "open";
    case drip::v1::REPORT_STATE_ACKNOWLEDGED:
      return "acknowledged";
    case drip::v1::REPORT_STATE_MITIGATED:
      return "mitigated";
    case drip::v1::REPORT_STATE_RESOLVED:
      return "resolved";
    default:
      return "";
  }
}

drip::v1::ReportState ParseReportState(std::string_view name) {
  for (drip::v1::ReportState state :
       {drip::v1::REPORT_STATE_OPEN, drip::v1::REPORT_STATE_ACKNOWLEDGED,
        drip::v1::REPORT_STATE_MITIGATED, drip::v1::REPORT_STATE_RESOLVED}) {
    if (name == ReportStateName(state)) return state;
  }
  return drip::v1::REPORT_STATE_UNSPECIFIED;
}

}  // namespace drip
