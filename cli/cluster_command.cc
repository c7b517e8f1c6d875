#include "cli/cluster_command.h"

#include <algorithm>
#include <string>
#include <vector>

#include "cli/table_printer.h"
#include "cli/terminal_safe_text.h"
#include "common/base/clock.h"
#include "common/base/duration.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "nlohmann/json.hpp"

namespace drip::cli {
namespace {

// The member whose hosts name `host` (the answer to --host), or null.
const drip::v1::ClusterMember* MemberOf(const drip::v1::ListMembersResponse& response,
                                        const std::string& host) {
  for (const auto& m : response.members()) {
    for (const std::string& h : m.hosts()) {
      if (h == host) return &m;
    }
  }
  return nullptr;
}

}  // namespace

void RenderCluster(const drip::v1::ListMembersResponse& response, const ClusterOptions& options,
                   int64_t now_ms, std::ostream& out) {
  const drip::v1::ClusterMember* holder =
      options.host.empty() ? nullptr : MemberOf(response, options.host);
  if (options.json) {
    nlohmann::json members = nlohmann::json::array();
    for (const auto& m : response.members()) {
      members.push_back({{"name", m.name()},
                         {"address", m.address()},
                         {"started_ms", m.started_ms()},
                         {"hosts_connected", m.hosts_connected()},
                         {"hosts_placed", m.hosts_placed()},
                         {"hosts", std::vector<std::string>(m.hosts().begin(), m.hosts().end())},
                         {"self", m.self()}});
    }
    nlohmann::json j = {{"mode", response.mode()}, {"members", members}};
    if (response.mode() == "etcd") {
      j["etcd_up"] = response.etcd_up();
      j["etcd_endpoint"] = response.etcd_endpoint();
    }
    if (!options.host.empty()) {
      nlohmann::json copies = nlohmann::json::array();
      for (const auto& c : response.copies()) {
        copies.push_back({{"member", c.member()},
                          {"address", c.address()},
                          {"role", c.owner() ? "owner" : "replica"},
                          {"samples", c.samples()},
                          {"error", c.error()}});
      }
      j["host"] = {{"name", options.host},
                   {"member", holder == nullptr ? "" : holder->name()},
                   {"address", holder == nullptr ? "" : holder->address()},
                   {"copies", copies}};
    }
    out << DumpJsonForTerminal(j) << "\n";
    return;
  }
  if (!options.host.empty()) {
    if (holder == nullptr) {
      out << fmt::format("{}: no live member to place it on\n", TerminalSafe(options.host));
    } else {
      out << fmt::format("{} is placed on {}{}\n", TerminalSafe(options.host), holder->name(),
                         holder->address().empty() ? "" : " at " + holder->address());
    }
    if (response.copies_size() == 0) return;
    // Fewer than the replication factor asks when fewer members are live.
    out << fmt::format("its copies ({}):\n", response.copies_size());
    TablePrinter copies({"MEMBER", "ROLE", "SAMPLES", ""});
    for (const auto& c : response.copies()) {
      copies.AddRow({c.member(), c.owner() ? "owner" : "replica",
                     c.error().empty() ? std::to_string(c.samples()) : "?",
                     c.error().empty() ? (c.samples() == 0 ? "(holds none)" : "")
                                       : "did not say: " + TerminalSafe(c.error())});
    }
    copies.Print(out);
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
  TablePrinter table({"MEMBER", "ADDRESS", "AGENTS", "PLACED", "UP FOR", ""});
  for (const auto& m : response.members()) {
    table.AddRow(
        {m.name(), m.address().empty() ? "-" : m.address(), std::to_string(m.hosts_connected()),
         std::to_string(m.hosts_placed()),
         m.started_ms() > 0 ? FormatSpan(static_cast<double>(now_ms - m.started_ms()) / 1000) : "-",
         m.self() ? "(answered)" : ""});
  }
  table.Print(out);
  bool any_hosts = false;
  for (const auto& m : response.members()) any_hosts |= m.hosts_size() > 0;
  if (!any_hosts) return;
  out << "\nhosts placed on each member, by name:\n";
  for (const auto& m : response.members()) {
    const uint64_t more = m.hosts_placed() - std::min<uint64_t>(m.hosts_placed(), m.hosts_size());
    out << fmt::format(
        "  {}  {}{}\n", m.name(),
        m.hosts_size() == 0 ? std::string("-") : fmt::format("{}", fmt::join(m.hosts(), " ")),
        more == 0 ? std::string() : fmt::format(" (and {} more)", more));
  }
}

absl::Status RunClusterCommand(QueryClient& client, const ClusterOptions& options,
                               std::ostream& out) {
  drip::v1::ListMembersRequest request;
  request.set_host(options.host);
  request.set_max_hosts_per_member(options.max_hosts);
  auto response = client.ListMembers(request);
  if (!response.ok()) return response.status();
  RenderCluster(*response, options, SystemClock::Get()->NowMs(), out);
  return absl::OkStatus();
}

}  // namespace drip::cli
