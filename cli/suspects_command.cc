#include "cli/suspects_command.h"

#include <algorithm>
#include <chrono>

#include "cli/leak_report_format.h"
#include "cli/stack_printer.h"
#include "cli/table_printer.h"
#include "cli/terminal_safe_text.h"
#include "common/base/duration.h"
#include "diagnoser/format/diagnosis_json.h"
#include "diagnoser/format/diagnosis_proto.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip::cli {
namespace {

std::string Eta(const drip::v1::Suspect& s) {
  if (!s.has_eta_to_oom_seconds()) return "-";
  return FormatSpan(s.eta_to_oom_seconds());
}

// The heap snapshot of a suspect and its diagnosis, the diagnosis in the same shape as
// `dripctl diagnose --json` (docs/snapshot.md).
nlohmann::json SnapshotJson(const drip::v1::SuspectSnapshot& snap) {
  nlohmann::json diagnosis = nullptr;
  if (snap.has_diagnosis()) {
    absl::StatusOr<diagnoser::Diagnosis> d = diagnoser::DiagnosisFromProto(snap.diagnosis());
    if (d.ok()) diagnosis = nlohmann::json::parse(diagnoser::DiagnosisToJson(*d).dump());
  }
  return {{"command_id", snap.command_id()},
          {"state", snap.state()},
          {"error", snap.error()},
          {"instance", snap.instance()},
          {"requested_ms", snap.requested_ms()},
          {"finished_ms", snap.finished_ms()},
          {"diagnosis", diagnosis}};
}

// One line on a suspect's snapshot for the table view.
std::string SnapshotLine(const drip::v1::SuspectSnapshot& snap) {
  if (snap.state() != "done") {
    return snap.error().empty() ? snap.state() : fmt::format("{}: {}", snap.state(), snap.error());
  }
  for (const auto& stack : snap.diagnosis().stacks()) {
    if (stack.verdict() != "leak" || stack.frames_size() == 0) continue;
    return fmt::format("leaking stack: {} ({}, score {:.2f})", TopFrameLabel(stack),
                       FormatByteRate(stack.growth_bytes_per_hour()), stack.score());
  }
  return "no leaking stack found: " + snap.diagnosis().summary();
}

}  // namespace

void RenderSuspects(const drip::v1::ListSuspectsResponse& response, bool json, int64_t now_ms,
                    std::ostream& out) {
  if (json) {
    nlohmann::json suspects = nlohmann::json::array();
    for (const auto& s : response.suspects()) {
      suspects.push_back(
          {{"host", s.host()},
           {"component", s.component()},
           {"instance", s.instance()},
           {"first_flagged", s.first_flagged_s()},
           {"last_updated", s.last_updated_s()},
           {"growth_bytes_per_hour", s.growth_bytes_per_hour()},
           {"score", s.score()},
           {"current_bytes", s.current_bytes()},
           {"normal_bytes", s.normal_bytes()},
           {"eta_to_oom_seconds",
            s.has_eta_to_oom_seconds() ? nlohmann::json(s.eta_to_oom_seconds()) : nullptr},
           {"limited_by", s.limited_by().empty() ? nullptr : nlohmann::json(s.limited_by())},
           {"limit_bytes", s.limit_bytes() > 0 ? nlohmann::json(s.limit_bytes()) : nullptr},
           {"headroom_bytes",
            s.limited_by().empty() ? nullptr : nlohmann::json(s.headroom_bytes())},
           {"oom_kills", s.oom_kills()},
           {"rule", s.rule()},
           {"reason", s.reason()},
           {"snapshot", s.has_snapshot() ? SnapshotJson(s.snapshot()) : nlohmann::json(nullptr)}});
    }
    nlohmann::json components = nlohmann::json::array();
    for (const auto& c : response.components()) {
      components.push_back({{"component", c.component()},
                            {"first_flagged", c.first_flagged_s()},
                            {"hosts", c.hosts()},
                            {"hosts_seen", c.hosts_seen()},
                            {"max_growth_bytes_per_hour", c.max_growth_bytes_per_hour()}});
    }
    out << DumpJsonForTerminal(nlohmann::json{{"suspects", suspects}, {"components", components}})
        << "\n";
    return;
  }
  if (response.suspects_size() == 0) {
    out << "no leak suspects\n";
    return;
  }
  TablePrinter table({"HOST", "COMPONENT", "INSTANCE", "GROWTH", "NOW", "NORMAL", "LIMIT",
                      "HEADROOM", "ETA OOM", "RULE", "FLAGGED", "SCORE"});
  for (const auto& s : response.suspects()) {
    table.AddRow({s.host(), s.component(), s.instance().empty() ? "-" : s.instance(),
                  FormatBytes(static_cast<uint64_t>(s.growth_bytes_per_hour())) + "/h",
                  FormatBytes(s.current_bytes()), FormatBytes(s.normal_bytes()),
                  FormatLimit(s.limited_by(), s.limit_bytes(), s.oom_kills()),
                  FormatHeadroom(s.limited_by(), s.headroom_bytes()), Eta(s), s.rule(),
                  FormatAgo(s.first_flagged_s() * 1000, now_ms), fmt::format("{:.2f}", s.score())});
  }
  table.Print(out);
  out << "\n";
  for (const auto& s : response.suspects()) {
    out << fmt::format("{} {}: {}\n", s.host(), s.component(), s.reason());
    if (s.has_snapshot()) {
      out << fmt::format("  heap snapshot: {}\n", SnapshotLine(s.snapshot()));
    }
  }
  out << "\n";
  TablePrinter components({"COMPONENT", "HOSTS", "OF", "MAX GROWTH", "FIRST FLAGGED"});
  for (const auto& c : response.components()) {
    components.AddRow({c.component(), std::to_string(c.hosts()), std::to_string(c.hosts_seen()),
                       FormatBytes(static_cast<uint64_t>(c.max_growth_bytes_per_hour())) + "/h",
                       FormatAgo(c.first_flagged_s() * 1000, now_ms)});
  }
  components.Print(out);
}

absl::Status RunSuspectsCommand(QueryClient& client, const std::string& component, bool json,
                                std::ostream& out) {
  drip::v1::ListSuspectsRequest request;
  request.set_component(component);
  auto response = client.ListSuspects(request);
  if (!response.ok()) return response.status();
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  RenderSuspects(*response, json, now_ms, out);
  return absl::OkStatus();
}

}  // namespace drip::cli
