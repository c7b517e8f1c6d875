#include "cli/hosts_command.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "cli/table_printer.h"
#include "cli/terminal_safe_text.h"
#include "common/base/duration.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace drip::cli {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Label(const drip::v1::HostInfo& host, const std::string& key) {
  auto it = host.labels().find(key);
  return it == host.labels().end() ? "-" : it->second;
}

}  // namespace

void RenderHosts(const drip::v1::ListHostsResponse& response, bool json, int64_t now_ms,
                 std::ostream& out) {
  if (json) {
    nlohmann::json hosts = nlohmann::json::array();
    for (const auto& h : response.hosts()) {
      nlohmann::json labels = nlohmann::json::object();
      for (const auto& [k, v] : h.labels()) labels[k] = v;
      hosts.push_back({{"host", h.host()},
                       {"connected", h.connected()},
                       {"labels", labels},
                       {"agent_version", h.agent_version()},
                       {"sampler", h.sampler()},
                       {"first_seen_ms", h.first_seen_ms()},
                       {"last_seen_ms", h.last_seen_ms()},
                       {"acked_sequence", h.acked_sequence()},
                       {"samples_stored", h.samples_stored()},
                       {"replica_samples_stored", h.replica_samples_stored()},
                       {"gaps", h.gaps()},
                       {"memory_total_bytes", h.memory_total_bytes()},
                       {"collector", h.collector()}});
    }
    out << DumpJsonForTerminal(nlohmann::json{{"hosts", hosts}}) << "\n";
    return;
  }
  // A cluster's answer says which collector holds each host; a standalone one does not.
  const bool clustered = std::any_of(response.hosts().begin(), response.hosts().end(),
                                     [](const auto& h) { return !h.collector().empty(); });
  std::vector<std::string> columns = {"HOST",    "STATE", "LAST SEEN", "AGENT", "SAMPLER", "MEMORY",
                                      "SAMPLES", "GAPS",  "KERNEL",    "OS",    "LABELS"};
  if (clustered) columns.insert(columns.begin() + 2, "COLLECTOR");
  TablePrinter table(columns);
  for (const auto& h : response.hosts()) {
    std::string extra;
    for (const auto& [k, v] : h.labels()) {
      if (k == "kernel" || k == "os" || k == "arch") continue;
      extra += fmt::format("{}{}={}", extra.empty() ? "" : ",", k, v);
    }
    std::vector<std::string> row = {
        h.host(),
        h.connected() ? "connected" : "disconnected",
        FormatAgo(h.last_seen_ms(), now_ms),
        h.agent_version(),
        h.sampler().empty() ? "-" : h.sampler(),
        h.memory_total_bytes() ? FormatBytes(h.memory_total_bytes()) : "-",
        std::to_string(h.samples_stored()),
        std::to_string(h.gaps()),
        Label(h, "kernel"),
        Label(h, "os"),
        extra.empty() ? "-" : extra};
    if (clustered) row.insert(row.begin() + 2, h.collector().empty() ? "-" : h.collector());
    table.AddRow(row);
  }
  table.Print(out);
}

absl::Status RunHostsCommand(QueryClient& client, bool json, std::ostream& out) {
  auto response = client.ListHosts();
  if (!response.ok()) return response.status();
  RenderHosts(*response, json, NowMs(), out);
  return absl::OkStatus();
}

}  // namespace drip::cli
