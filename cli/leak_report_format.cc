#include "cli/leak_report_format.h"

#include <algorithm>
#include <cmath>

#include "cli/stack_printer.h"
#include "common/base/duration.h"

namespace drip::cli {

std::string FormatMinEta(const drip::v1::LeakReport& report) {
  if (!report.has_min_eta_to_oom_seconds()) return "-";
  return FormatSpan(report.min_eta_to_oom_seconds());
}

std::string FormatHostEta(const drip::v1::LeakHost& host) {
  if (!host.has_eta_to_oom_seconds()) return "-";
  return FormatSpan(host.eta_to_oom_seconds());
}

std::string ReportTopFrame(const drip::v1::LeakReport& report) {
  if (report.top_stacks_size() == 0) return "-";
  return TopFrameLabel(report.top_stacks(0));
}

}  // namespace drip::cli
