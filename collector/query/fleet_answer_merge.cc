#include "collector/query/fleet_answer_merge.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "collector/cluster/rendezvous.h"
#include "common/rpc/report_state.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace drip::collector {
namespace {

// Bytes that are equal exactly when the messages are (maps in a fixed order).
std::string CanonicalBytes(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

// The record of the member that heard from the host last decides what the host is now
// (labels, version, memory); counts add up, times take their extremes.
void CombineHost(drip::v1::HostInfo from, const std::string& member, drip::v1::HostInfo* into) {
  const bool newer = from.last_seen_ms() > into->last_seen_ms();
  const int64_t first_seen = into->first_seen_ms() == 0 ? from.first_seen_ms()
                             : from.first_seen_ms() == 0
                                 ? into->first_seen_ms()
                                 : std::min(into->first_seen_ms(), from.first_seen_ms());
  // A replica's copies count apart (docs/cluster.md, "Replication"): the samples the host's
  // streams stored add up across the owners it had, and the copies of them are no more.
  const uint64_t samples = into->samples_stored() + from.samples_stored();
  const uint64_t replica_samples = into->replica_samples_stored() + from.replica_samples_stored();
  const uint64_t gaps = into->gaps() + from.gaps();
  const uint64_t acked = std::max(into->acked_sequence(), from.acked_sequence());
  const int64_t last_sample = std::max(into->last_sample_ms(), from.last_sample_ms());
  const bool into_connected = into->connected();
  if (from.connected() || (newer && !into_connected)) {
    const bool connected = from.connected() || into_connected;
    from.set_collector(member);
    *into = std::move(from);
    into->set_connected(connected);
  }
  into->set_first_seen_ms(first_seen);
  into->set_samples_stored(samples);
  into->set_replica_samples_stored(replica_samples);
  into->set_gaps(gaps);
  into->set_acked_sequence(acked);
  into->set_last_sample_ms(last_sample);
}

}  // namespace

drip::v1::ListHostsResponse MergeHosts(std::vector<MemberPart<drip::v1::ListHostsResponse>> parts) {
  std::map<std::string, drip::v1::HostInfo> hosts;
  for (MemberPart<drip::v1::ListHostsResponse>& part : parts) {
    for (drip::v1::HostInfo& host : *part.response.mutable_hosts()) {
      auto [it, inserted] = hosts.try_emplace(host.host());
      if (inserted) {
        it->second = std::move(host);
        it->second.set_collector(part.member);
      } else {
        CombineHost(std::move(host), part.member, &it->second);
      }
    }
  }
  drip::v1::ListHostsResponse out;
  for (auto& [name, host] : hosts) *out.add_hosts() = std::move(host);
  return out;
}

drip::v1::GetSeriesResponse MergeSeries(std::vector<drip::v1::GetSeriesResponse> parts) {
  std::map<std::pair<std::string, std::string>, drip::v1::Series> series;
  std::map<std::tuple<int64_t, int64_t, uint64_t, uint64_t>, drip::v1::SeriesGap> gaps;
  for (drip::v1::GetSeriesResponse& part : parts) {
    for (drip::v1::Series& s : *part.mutable_series()) {
      auto [it, inserted] = series.try_emplace({s.component(), s.instance()});
      if (inserted) {
        it->second = std::move(s);
        continue;
      }
      for (drip::v1::Sample& sample : *s.mutable_samples()) {
        *it->second.add_samples() = std::move(sample);
      }
    }
    for (drip::v1::SeriesGap& g : *part.mutable_gaps()) {
      gaps.try_emplace({g.from_ms(), g.until_ms(), g.batches(), g.samples()}, std::move(g));
    }
  }
  drip::v1::GetSeriesResponse out;
  for (auto& [key, s] : series) {
    auto* samples = s.mutable_samples();
    std::vector<std::pair<int64_t, std::string>> keyed;
    keyed.reserve(samples->size());
    for (const drip::v1::Sample& sample : *samples) {
      keyed.emplace_back(sample.timestamp_ms(), CanonicalBytes(sample));
    }
    std::vector<size_t> order(keyed.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return keyed[a] < keyed[b]; });
    drip::v1::Series merged;
    merged.set_host(s.host());
    merged.set_component(s.component());
    merged.set_instance(s.instance());
    for (size_t i = 0; i < order.size(); ++i) {
      // The same sample stored by two owners is one sample.
      if (i > 0 && keyed[order[i]] == keyed[order[i - 1]]) continue;
      *merged.add_samples() = std::move((*samples)[static_cast<int>(order[i])]);
    }
    *out.add_series() = std::move(merged);
  }
  std::vector<drip::v1::SeriesGap> ordered;
  for (auto& [key, g] : gaps) ordered.push_back(std::move(g));
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return std::make_pair(a.recorded_ms(), a.from_ms()) <
           std::make_pair(b.recorded_ms(), b.from_ms());
  });
  for (drip::v1::SeriesGap& g : ordered) *out.add_gaps() = std::move(g);
  return out;
}

drip::v1::ListSuspectsResponse MergeSuspects(std::vector<drip::v1::ListSuspectsResponse> parts) {
  std::map<std::tuple<std::string, std::string, std::string>, drip::v1::Suspect> suspects;
  std::map<std::string, drip::v1::ComponentSuspect> components;
  for (drip::v1::ListSuspectsResponse& part : parts) {
    for (drip::v1::Suspect& s : *part.mutable_suspects()) {
      auto [it, inserted] = suspects.try_emplace({s.host(), s.component(), s.instance()});
      if (inserted || s.last_updated_s() > it->second.last_updated_s()) it->second = std::move(s);
    }
    for (const drip::v1::ComponentSuspect& c : part.components()) {
      auto [it, inserted] = components.try_emplace(c.component(), c);
      if (inserted) continue;
      it->second.set_first_flagged_s(std::min(it->second.first_flagged_s(), c.first_flagged_s()));
      it->second.set_hosts_seen(it->second.hosts_seen() + c.hosts_seen());
    }
  }
  // A host that moved may be suspected on its old and its new owner: count hosts, and
  // take the fastest growth, from the merged suspects.
  std::map<std::string, std::set<std::string>> hosts_of;
  std::map<std::string, double> fastest;
  std::vector<drip::v1::Suspect> ordered;
  for (auto& [key, s] : suspects) {
    hosts_of[s.component()].insert(s.host());
    double& f = fastest[s.component()];
    f = std::max(f, s.growth_bytes_per_hour());
    ordered.push_back(std::move(s));
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    if (a.score() != b.score()) return a.score() > b.score();
    return a.growth_bytes_per_hour() > b.growth_bytes_per_hour();
  });
  drip::v1::ListSuspectsResponse out;
  for (drip::v1::Suspect& s : ordered) *out.add_suspects() = std::move(s);
  std::vector<drip::v1::ComponentSuspect> merged;
  for (auto& [name, c] : components) {
    auto hosts = hosts_of.find(name);
    if (hosts != hosts_of.end()) {
      c.set_hosts(static_cast<int32_t>(hosts->second.size()));
      c.set_max_growth_bytes_per_hour(fastest[name]);
    }
    c.set_hosts_seen(std::max(c.hosts_seen(), c.hosts()));
    merged.push_back(std::move(c));
  }
  std::stable_sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) {
    return a.first_flagged_s() < b.first_flagged_s();
  });
  for (drip::v1::ComponentSuspect& c : merged) *out.add_components() = std::move(c);
  return out;
}

drip::v1::ListLeaksResponse MergeLeaks(std::vector<drip::v1::ListLeaksResponse> parts) {
  std::map<std::string, drip::v1::LeakReport> reports;
  for (drip::v1::ListLeaksResponse& part : parts) {
    for (drip::v1::LeakReport& r : *part.mutable_reports()) {
      auto [it, inserted] = reports.try_emplace(r.id());
      if (inserted || r.updated_ms() > it->second.updated_ms()) it->second = std::move(r);
    }
  }
  std::vector<drip::v1::LeakReport> ordered;
  for (auto& [id, r] : reports) ordered.push_back(std::move(r));
  auto resolved = [](const drip::v1::LeakReport& r) {
    return ReportStateOf(r) == drip::v1::REPORT_STATE_RESOLVED;
  };
  auto rank = [](const drip::v1::LeakReport& r) {
    return r.severity() == "critical" ? 0 : r.severity() == "warning" ? 1 : 2;
  };
  std::stable_sort(ordered.begin(), ordered.end(), [&](const auto& a, const auto& b) {
    if (resolved(a) != resolved(b)) return !resolved(a);
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (a.last_seen_s() != b.last_seen_s()) return a.last_seen_s() > b.last_seen_s();
    return a.updated_ms() > b.updated_ms();
  });
  drip::v1::ListLeaksResponse out;
  for (drip::v1::LeakReport& r : ordered) *out.add_reports() = std::move(r);
  return out;
}

drip::v1::ListAuditResponse MergeAudit(std::vector<drip::v1::ListAuditResponse> parts,
                                       size_t limit) {
  std::vector<drip::v1::AuditEntry> entries;
  for (drip::v1::ListAuditResponse& part : parts) {
    for (drip::v1::AuditEntry& e : *part.mutable_entries()) entries.push_back(std::move(e));
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.time_ms() > b.time_ms(); });
  if (entries.size() > limit) entries.resize(limit);
  drip::v1::ListAuditResponse out;
  for (drip::v1::AuditEntry& e : entries) *out.add_entries() = std::move(e);
  return out;
}

std::vector<std::string> HostsWithNoCopyAnswering(const std::vector<std::string>& hosts,
                                                  const std::vector<std::string>& members,
                                                  int replication_factor,
                                                  const std::set<std::string>& silent) {
  std::vector<std::string> out;
  if (silent.empty()) return out;
  const auto holders = static_cast<size_t>(std::max(1, replication_factor));
  for (const std::string& host : hosts) {
    const std::vector<std::string> ranking = RendezvousRanking(host, members);
    const auto end =
        ranking.begin() + static_cast<std::ptrdiff_t>(std::min(holders, ranking.size()));
    if (ranking.begin() != end && std::all_of(ranking.begin(), end, [&](const std::string& m) {
          return silent.contains(m);
        })) {
      out.push_back(host);
    }
  }
  return out;
}

}  // namespace drip::collector
