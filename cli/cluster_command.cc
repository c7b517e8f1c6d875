#include "cli/cluster_command.h"

#include "cli/table_printer.h"
#include "cli/terminal_safe_text.h"
#include "common/base/clock.h"
#include "common/base/duration.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip::cli {

void RenderCluster(const drip::v1::ListMembersResponse& response, bool json, int64_t now_ms,
                   std::ostream& out) {
  if (json) {
    nlohmann::json members = nlohmann::json::array();
    for (const auto& m : response.members()) {
      members.push_back({{"name", m.name()},
                         {"address", m.address()},
                         {"started_ms", m.started_ms()},
                         {"hosts_connected", m.hosts_connected()},
                         {"hosts_placed", m.hosts_placed()},
                         {"self", m.self()}});
    }
    nlohmann::json j = {{"mode", response.mode()}, {"members", members}};
    if (response.mode() == "etcd") {
      j["etcd_up"] = response.etcd_up();
      j["etcd_endpoint"] = response.etcd_endpoint();
    }
    out << DumpJsonForTerminal(j) << "\n";
    return;
  }
  if (response.mode() == "standalone") {
    out << "standalone collector (no etcd: cluster.etcd_endpoints is empty)\n";
  } else {
    out << fmt::format("{} collectors; etcd {} ({}){}\n", response.members_size(),
                       response.etcd_up() ? "up" : "DOWN", response.etcd_endpoint(),
                       response.etcd_up() ? ""
                                          : ": the members are those last read; ownership is "
                                            "frozen until etcd answers");
  }
  // PLACED: how many known hosts rendezvous placement puts on the member; a standalone
  // collector places every host on itself.
  const bool standalone = response.mode() == "standalone";
  TablePrinter table({"MEMBER", "ADDRESS", "AGENTS", "PLACED", "UP FOR", ""});
  for (const auto& m : response.members()) {
    table.AddRow(
        {m.name(), m.address().empty() ? "-" : m.address(), std::to_string(m.hosts_connected()),
         standalone ? "all" : std::to_string(m.hosts_placed()),
         m.started_ms() > 0 ? FormatSpan(static_cast<double>(now_ms - m.started_ms()) / 1000) : "-",
         m.self() ? "(answered)" : ""});
  }
  table.Print(out);
}

absl::Status RunClusterCommand(QueryClient& client, bool json, std::ostream& out) {
  auto response = client.ListMembers();
  if (!response.ok()) return response.status();
  RenderCluster(*response, json, SystemClock::Get()->NowMs(), out);
  return absl::OkStatus();
}

}  // namespace drip::cli
