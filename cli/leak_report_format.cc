#include "cli/leak_report_format.h"

#include <algorithm>
#include <cmath>

#include "cli/stack_printer.h"
#include "common/base/duration.h"
#include "fmt/format.h"

namespace drip::cli {

std::string FormatMinEta(const drip::v1::LeakReport& report) {
  if (!report.has_min_eta_to_oom_seconds()) return "-";
  return FormatSpan(report.min_eta_to_oom_seconds());
}

std::string FormatLimit(const std::string& limited_by, uint64_t limit_bytes, uint32_t oom_kills) {
  std::string text =
      limited_by.empty() ? "-" : fmt::format("{} {}", limited_by, FormatBytes(limit_bytes));
  if (oom_kills > 0) text += fmt::format(" ({} OOM kill{})", oom_kills, oom_kills == 1 ? "" : "s");
  return text;
}

std::string FormatHeadroom(const std::string& limited_by, uint64_t headroom_bytes) {
  return limited_by.empty() ? "-" : FormatBytes(headroom_bytes);
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
