#include "cli/leaks_list_command.h"

#include <chrono>

#include "cli/leak_report_format.h"
#include "cli/leak_report_json.h"
#include "cli/table_printer.h"
#include "common/base/duration.h"
#include "common/rpc/report_state.h"
#include "fmt/format.h"

namespace drip::cli {
namespace {

// Says what was filtered, so "nothing" is not mistaken for "the fleet is clean".
std::string NoReportsLine(const LeaksListOptions& options) {
  std::string line = "no leak reports";
  if (options.state.empty()) {
    line += " that are not resolved";
  } else if (options.state != "all") {
    line += " in state " + options.state;
  }
  if (!options.component.empty()) line += " for component " + options.component;
  if (options.state.empty()) line += " (--state all lists resolved ones too)";
  return line;
}

}  // namespace

absl::StatusOr<std::string> ParseLeakStateFilter(const std::string& text) {
  if (text.empty() || text == "all" ||
      ParseReportState(text) != drip::v1::REPORT_STATE_UNSPECIFIED) {
    return text;
  }
  return absl::InvalidArgumentError(fmt::format(
      "--state: '{}' is not a report state (open, acknowledged, mitigated, resolved, all)", text));
}

void RenderLeaksList(const drip::v1::ListLeaksResponse& response, const LeaksListOptions& options,
                     int64_t now_ms, const TerminalStyle& style, std::ostream& out) {
  if (options.json) {
    nlohmann::ordered_json reports = nlohmann::ordered_json::array();
    for (const auto& r : response.reports()) reports.push_back(LeakReportToJson(r));
    nlohmann::ordered_json j;
    j["reports"] = std::move(reports);
    out << DumpJson(j) << "\n";
    return;
  }
  if (response.reports_size() == 0) {
    out << NoReportsLine(options) << "\n";
    return;
  }
  TablePrinter table({"ID", "COMPONENT", "STATE", "SEVERITY", "HOSTS", "MAX GROWTH", "MIN ETA",
                      "FIRST SEEN", "TOP FRAME"});
  for (const auto& r : response.reports()) {
    table.AddRow({r.id(), r.component(), r.state(), r.severity(),
                  fmt::format("{}/{}", r.hosts_size(), r.hosts_seen()),
                  FormatByteRate(r.max_growth_bytes_per_hour()), FormatMinEta(r),
                  FormatAgo(SecondsToMs(r.first_seen_s()), now_ms), ReportTopFrame(r)});
    if (IsAlertSeverity(r.severity())) table.AlertLastRowCell(3);
  }
  table.Print(out, style);
}

absl::Status RunLeaksListCommand(QueryClient& client, const LeaksListOptions& options,
                                 const TerminalStyle& style, std::ostream& out) {
  absl::StatusOr<std::string> state = ParseLeakStateFilter(options.state);
  if (!state.ok()) return state.status();
  drip::v1::ListLeaksRequest request;
  request.set_state(*state);
  request.set_component(options.component);
  auto response = client.ListLeaks(request);
  if (!response.ok()) return response.status();
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  RenderLeaksList(*response, options, now_ms, style, out);
  return absl::OkStatus();
}

}  // namespace drip::cli
