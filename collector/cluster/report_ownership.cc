#include "collector/cluster/report_ownership.h"

#include <algorithm>
#include <utility>

#include "collector/cluster/rendezvous.h"
#include "collector/query/suspects_proto.h"
#include "common/base/clock.h"
#include "common/daemon/logging.h"
#include "common/rpc/report_state.h"
#include "drip/v1/query.grpc.pb.h"
#include "fmt/format.h"

namespace drip::collector {
namespace {

// `report` as etcd keeps it: whole, or without its least urgent hosts when too large
// (the book keeps them sorted most urgent first).
std::string StoredForm(drip::v1::LeakReport report) {
  std::string bytes = report.SerializeAsString();
  // A long-lived report's history and mitigations grow too: their oldest go first, then
  // the least urgent hosts.
  while (bytes.size() > ReportOwnership::kMaxStoredReportBytes &&
         (report.history_size() > 64 || report.mitigations_size() > 64)) {
    if (report.history_size() > 64) {
      report.mutable_history()->DeleteSubrange(1, report.history_size() / 2);
    }
    if (report.mitigations_size() > 64) {
      report.mutable_mitigations()->DeleteSubrange(0, report.mitigations_size() / 2);
    }
    bytes = report.SerializeAsString();
  }
  while (bytes.size() > ReportOwnership::kMaxStoredReportBytes && report.hosts_size() > 0) {
    const double keep = static_cast<double>(ReportOwnership::kMaxStoredReportBytes) /
                        static_cast<double>(bytes.size()) * 0.9;
    const int hosts = std::min(report.hosts_size() - 1,
                               static_cast<int>(keep * static_cast<double>(report.hosts_size())));
    report.mutable_hosts()->DeleteSubrange(hosts, report.hosts_size() - hosts);
    bytes = report.SerializeAsString();
  }
  return bytes;
}

}  // namespace

FleetSuspects SuspectsAMemberSpeaksFor(const std::string& member,
                                       const std::vector<std::string>& members,
                                       const FleetSuspects& part,
                                       const std::function<bool(const std::string&)>& owns,
                                       const std::function<bool(const std::string&)>& streams_here,
                                       int64_t now_s, size_t* refused) {
  const int64_t latest_s = now_s + kMaxEtcdClockSkewMs / 1000;
  FleetSuspects kept;
  for (const HostSuspect& h : part.hosts) {
    if (!owns(h.suspect.component)) continue;
    const std::vector<std::string> ranking = RendezvousRanking(h.suspect.host, members);
    const auto top =
        ranking.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(2, ranking.size()));
    if (std::find(ranking.begin(), top, member) == top || h.suspect.last_updated > latest_s ||
        streams_here(h.suspect.host)) {
      ++*refused;
      continue;
    }
    kept.hosts.push_back(h);
  }
  for (const analyzer::ComponentSuspect& c : part.components) {
    if (owns(c.component)) kept.components.push_back(c);
  }
  return kept;
}

ReportOwnership::ReportOwnership(ClusterMembership* cluster, MemberQueryClient* members,
                                 LeakPipeline* pipeline, const ConnectedHosts* hosts,
                                 CollectorMetrics* metrics, std::chrono::milliseconds interval)
    : cluster_(cluster),
      members_(members),
      pipeline_(pipeline),
      hosts_(hosts),
      metrics_(metrics),
      interval_(interval),
      loop_("drip-reports", [this] {
        RunRound();
        return interval_;
      }) {}

ReportOwnership::~ReportOwnership() { Stop(); }

void ReportOwnership::Start() { loop_.Start(); }

void ReportOwnership::Stop() { loop_.Stop(); }

std::string ReportOwnership::KeyOf(const std::string& component) const {
  return cluster_->prefix() + "reports/" + component;
}

void ReportOwnership::RunRound() {
  const std::vector<ClusterMember> members = cluster_->Members();
  const std::string self = cluster_->member_name();
  std::vector<std::string> names;
  std::vector<ClusterMember> others;
  for (const ClusterMember& m : members) {
    names.push_back(m.name);
    if (m.name != self) others.push_back(m);
  }
  // Not in the list: it cannot tell what it owns, so it takes nothing on.
  if (std::find(names.begin(), names.end(), self) == names.end()) return;

  // 1. The cluster's reports; with etcd away, the ones last read.
  absl::StatusOr<std::vector<EtcdKeyValue>> stored =
      cluster_->etcd()->GetPrefix(cluster_->prefix() + "reports/", nullptr,
                                  {.max_keys = kMaxSharedReports, .max_bytes = 256u << 20});
  if (stored.ok()) {
    // The last good copy of each report stands in for a record that is not one (until its
    // owner has written over it): the members keep the report meanwhile.
    std::map<std::string, const drip::v1::LeakReport*> previous;  // into *shared_
    for (const drip::v1::LeakReport& r : *shared_) previous.emplace(r.component(), &r);
    auto fresh = std::make_shared<std::vector<drip::v1::LeakReport>>();
    stored_.clear();
    size_t unreadable = 0;
    const std::string reports_prefix = cluster_->prefix() + "reports/";
    const int64_t now_ms = SystemClock::Get()->NowMs();
    for (const EtcdKeyValue& kv : *stored) {
      drip::v1::LeakReport report;
      const std::string component = kv.key.substr(reports_prefix.size());
      // Nothing read from etcd is trusted beyond its key: a report filed under another
      // component's key, or stamped ahead of the clock (it would win every comparison of
      // versions and undo an acknowledgement), is not adopted. Its key is taken as free,
      // so that the component's owner writes its own report over it.
      if (!report.ParseFromString(kv.value) || report.id().empty() ||
          report.component() != component || report.updated_ms() > now_ms + kMaxEtcdClockSkewMs) {
        ++unreadable;
        stored_[component] = {"", std::string(ReportStateName(drip::v1::REPORT_STATE_RESOLVED)), 0,
                              kv.mod_revision};
        if (auto it = previous.find(component); it != previous.end()) {
          fresh->push_back(*it->second);
        }
        continue;
      }
      stored_[component] = {report.id(), report.state(), report.updated_ms(), kv.mod_revision};
      fresh->push_back(std::move(report));
    }
    shared_ = std::move(fresh);
    if (unreadable > 0 && unreadable != unreadable_) {
      Logger("collector")
          ->warn(
              "cluster: {} records under {} are not leak reports of the component their key "
              "names, or are stamped ahead of this collector's clock; the last good copy is "
              "kept until the component's owner writes over them",
              unreadable, reports_prefix);
    }
    unreadable_ = unreadable;
    read_once_ = true;
  }
  // Ownership without the cluster's reports could open a second report of a component.
  if (!read_once_) return;

  // 2. The other members' suspects; a member that does not answer keeps its last part.
  std::map<std::string, FleetSuspects> live_parts;
  const std::vector<MemberAnswer<drip::v1::ListSuspectsResponse>> answers =
      members_->AskAll(others, &drip::v1::MemberService::Stub::async_interface::ListSuspects,
                       drip::v1::ListSuspectsRequest());
  for (const auto& answer : answers) {
    absl::StatusOr<FleetSuspects> part =
        absl::UnavailableError(std::string(answer.status.error_message()));
    if (answer.status.ok()) {
      std::vector<std::string> skipped;
      part = FleetSuspectsFromProto(answer.response, &skipped);
      if (!skipped.empty() && skipped.size() != skipped_[answer.member]) {
        Logger("collector")
            ->warn("cluster: {} suspects of member {} left out (a newer build?): {}",
                   skipped.size(), answer.member, skipped.front());
      }
      skipped_[answer.member] = skipped.size();
    }
    if (part.ok()) {
      if (silent_.erase(answer.member) > 0) {
        Logger("collector")
            ->info("cluster: member {} answers for its suspects again", answer.member);
      }
      live_parts[answer.member] = std::move(*part);
      continue;
    }
    // Logged once per member until it answers again: the owned reports lack its hosts'
    // fresh evidence meanwhile (a refusal means its access policy does not let this
    // collector's certificate read; docs/security.md).
    if (silent_.insert(answer.member).second) {
      Logger("collector")
          ->warn(
              "cluster: member {} ({}) did not give its suspects for the leak reports this "
              "one owns (its last ones are used): {}",
              answer.member, answer.address, std::string(part.status().message()));
    }
    if (auto it = peer_suspects_.find(answer.member); it != peer_suspects_.end()) {
      live_parts[answer.member] = std::move(it->second);
    }
  }
  peer_suspects_ = std::move(live_parts);  // members that left are dropped

  // 3. To the pipeline, applied at its next pass.
  auto owns = [names, self](const std::string& component) {
    return RendezvousOwner(component, names) == self;
  };
  LeakPipeline::ClusterReportView view;
  view.owns = owns;
  const int64_t now_s = SystemClock::Get()->NowMs() / 1000;
  size_t refused = 0;
  auto streams_here = [this](const std::string& host) { return hosts_->IsConnected(host); };
  for (const auto& [member, part] : peer_suspects_) {
    AddPeerSuspects(
        SuspectsAMemberSpeaksFor(member, names, part, owns, streams_here, now_s, &refused),
        &view.peer_suspects);
  }
  if (refused > 0 && refused != refused_suspects_) {
    Logger("collector")
        ->warn(
            "cluster: {} host suspects from other members left out: their hosts are not "
            "placed on the member that sent them or stream here, or their time is ahead of "
            "this clock",
            refused);
  }
  refused_suspects_ = refused;
  view.shared_reports = shared_;
  pipeline_->SetClusterReportView(std::move(view));

  // 4. What it owns (as of the pass before) and changed, to etcd.
  if (stored.ok()) WriteOwned(owns);
}

void ReportOwnership::WriteOwned(const std::function<bool(const std::string&)>& owns) {
  // The book's ownership may be a round behind this one: only what both say is owned.
  std::vector<drip::v1::LeakReport> owned = pipeline_->reports().Owned();
  std::erase_if(owned, [&](const drip::v1::LeakReport& r) { return !owns(r.component()); });
  metrics_->cluster_reports_owned.Set(static_cast<double>(owned.size()));
  for (const drip::v1::LeakReport& report : owned) {
    int64_t expected_revision = 0;
    if (auto it = stored_.find(report.component()); it != stored_.end()) {
      const StoredCopy& theirs = it->second;
      if (theirs.id == report.id() && theirs.updated_ms >= report.updated_ms()) continue;
      // Another report of the component, still open in etcd: the next pass adopts it and
      // this member's gives way — unless this book resolved it and the resolution never
      // reached etcd; then this member's report replaces it. An older one, resolved, is
      // replaced too.
      const bool theirs_resolved =
          ParseReportState(theirs.state) == drip::v1::REPORT_STATE_RESOLVED ||
          pipeline_->reports().HasResolved(theirs.id);
      if (theirs.id != report.id() && !theirs_resolved) continue;
      if (theirs.id != report.id() &&
          ParseReportState(theirs.state) == drip::v1::REPORT_STATE_RESOLVED &&
          theirs.updated_ms > report.updated_ms() &&
          ReportStateOf(report) == drip::v1::REPORT_STATE_RESOLVED) {
        continue;
      }
      expected_revision = theirs.mod_revision;
    }
    absl::StatusOr<bool> swapped = cluster_->etcd()->CompareAndPut(
        KeyOf(report.component()), expected_revision, StoredForm(report));
    if (!swapped.ok()) {
      // The others are tried all the same: one report etcd refuses must not hold them up.
      Logger("collector")
          ->warn("cluster: leak report {} not written to etcd (next round): {}", report.id(),
                 std::string(swapped.status().message()));
      continue;
    }
    if (*swapped) {
      metrics_->cluster_report_writes.Increment();
      stored_[report.component()] = {report.id(), report.state(), report.updated_ms(), 0};
    } else {
      metrics_->cluster_report_conflicts.Increment();
      Logger("collector")
          ->warn(
              "cluster: leak report {} ({}): another member wrote the component's report "
              "first; reading it next round",
              report.id(), report.component());
    }
  }
}

}  // namespace drip::collector
