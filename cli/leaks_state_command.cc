#include "cli/leaks_state_command.h"

#include "cli/leak_report_json.h"
#include "fmt/format.h"

namespace drip::cli {

void RenderLeakStateChange(const drip::v1::LeakReport& report, bool json, std::ostream& out) {
  if (json) {
    out << DumpJson(LeakReportToJson(report)) << "\n";
    return;
  }
  out << fmt::format("{} ({}) is now {}\n", report.id(), report.component(), report.state());
}

absl::Status RunLeakStateCommand(QueryClient& client, const LeakStateOptions& options,
                                 const std::string& actor, std::ostream& out) {
  drip::v1::UpdateLeakStateRequest request;
  request.set_id(options.id);
  request.set_state(options.state);
  request.set_actor(actor);
  request.set_note(options.note);
  auto report = client.UpdateLeakState(request);
  if (!report.ok()) return report.status();
  RenderLeakStateChange(*report, options.json, out);
  return absl::OkStatus();
}

}  // namespace drip::cli
