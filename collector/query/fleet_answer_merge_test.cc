#include "collector/query/fleet_answer_merge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collector/cluster/rendezvous.h"

namespace drip::collector {
namespace {

drip::v1::HostInfo Host(const std::string& name, int64_t first_seen, int64_t last_seen,
                        bool connected, uint64_t samples, const std::string& version) {
  drip::v1::HostInfo h;
  h.set_host(name);
  h.set_first_seen_ms(first_seen);
  h.set_last_seen_ms(last_seen);
  h.set_last_sample_ms(last_seen);
  h.set_connected(connected);
  h.set_samples_stored(samples);
  h.set_agent_version(version);
  return h;
}

drip::v1::Sample SampleAt(int64_t ms, uint64_t rss) {
  drip::v1::Sample s;
  s.set_timestamp_ms(ms);
  s.mutable_process()->set_anon_rss_bytes(rss);
  return s;
}

drip::v1::Series SeriesOf(const std::string& instance, const std::vector<int64_t>& stamps) {
  drip::v1::Series s;
  s.set_host("web-1");
  s.set_component("svc:api.service");
  s.set_instance(instance);
  for (int64_t t : stamps) *s.add_samples() = SampleAt(t, static_cast<uint64_t>(t) * 10);
  return s;
}

TEST(FleetAnswerMergeTest, AHostStoredByTwoOwnersIsOneRecordNamingTheOneStreamingIt) {
  MemberPart<drip::v1::ListHostsResponse> old_owner{"c2", {}};
  *old_owner.response.add_hosts() = Host("web-1", 1000, 5000, false, 40, "0.1.0");
  *old_owner.response.add_hosts() = Host("db-1", 2000, 9000, true, 7, "0.1.0");
  MemberPart<drip::v1::ListHostsResponse> new_owner{"c0", {}};
  *new_owner.response.add_hosts() = Host("web-1", 5500, 9000, true, 30, "0.2.0");

  drip::v1::ListHostsResponse merged = MergeHosts({old_owner, new_owner});
  ASSERT_EQ(merged.hosts_size(), 2);
  const drip::v1::HostInfo& db = merged.hosts(0);
  EXPECT_EQ(db.host(), "db-1");
  EXPECT_EQ(db.collector(), "c2");
  const drip::v1::HostInfo& web = merged.hosts(1);
  EXPECT_EQ(web.host(), "web-1");
  EXPECT_EQ(web.collector(), "c0");
  EXPECT_TRUE(web.connected());
  EXPECT_EQ(web.first_seen_ms(), 1000);
  EXPECT_EQ(web.last_seen_ms(), 9000);
  EXPECT_EQ(web.samples_stored(), 70u);
  EXPECT_EQ(web.agent_version(), "0.2.0");  // what the host runs now

  // The same in the other order: the merge does not depend on who answered first.
  drip::v1::ListHostsResponse reversed = MergeHosts({new_owner, old_owner});
  EXPECT_EQ(reversed.SerializeAsString(), merged.SerializeAsString());
}

// With replication a host's samples are on its owner and its replica: the replica's copies
// count apart, so that the host's samples_stored is what its agent's stream stored once.
TEST(FleetAnswerMergeTest, AReplicasCopiesAreCountedApartAndTheOwnerNamesTheHost) {
  MemberPart<drip::v1::ListHostsResponse> owner{"c0", {}};
  *owner.response.add_hosts() = Host("web-1", 1000, 9000, true, 30, "0.2.0");
  MemberPart<drip::v1::ListHostsResponse> replica{"c1", {}};
  drip::v1::HostInfo copy = Host("web-1", 1000, 9100, false, 0, "0.2.0");
  copy.set_replica_samples_stored(30);
  *replica.response.add_hosts() = copy;
  for (const drip::v1::ListHostsResponse& merged :
       {MergeHosts({owner, replica}), MergeHosts({replica, owner})}) {
    ASSERT_EQ(merged.hosts_size(), 1);
    EXPECT_EQ(merged.hosts(0).samples_stored(), 30u);
    EXPECT_EQ(merged.hosts(0).replica_samples_stored(), 30u);
    EXPECT_EQ(merged.hosts(0).collector(), "c0");
  }
}

// An answer is partial for a host only when every member that should keep a copy of it
// is silent: with two copies, one silent member leaves no host without one.
TEST(FleetAnswerMergeTest, AHostIsWithoutACopyOnlyWhenAllItsHoldersAreSilent) {
  const std::vector<std::string> members = {"c0", "c1", "c2"};
  std::vector<std::string> hosts;
  for (int i = 0; i < 60; ++i) hosts.push_back("web-" + std::to_string(i));
  EXPECT_TRUE(HostsWithNoCopyAnswering(hosts, members, 2, {}).empty());
  EXPECT_TRUE(HostsWithNoCopyAnswering(hosts, members, 2, {"c1"}).empty());
  const std::vector<std::string> lost = HostsWithNoCopyAnswering(hosts, members, 2, {"c1", "c2"});
  std::vector<std::string> expected;
  for (const std::string& h : hosts) {
    const std::vector<std::string> ranking = RendezvousRanking(h, members);
    if (ranking[0] != "c0" && ranking[1] != "c0") expected.push_back(h);
  }
  EXPECT_EQ(lost, expected);
  EXPECT_FALSE(lost.empty());
  // One copy: a silent member's own hosts are without one.
  const std::vector<std::string> alone = HostsWithNoCopyAnswering(hosts, members, 1, {"c1"});
  EXPECT_FALSE(alone.empty());
  for (const std::string& h : alone) EXPECT_EQ(RendezvousOwner(h, members), "c1");
}

TEST(FleetAnswerMergeTest, ADisconnectedHostIsNamedByTheMemberThatHeardFromItLast) {
  MemberPart<drip::v1::ListHostsResponse> a{"c0", {}};
  *a.response.add_hosts() = Host("web-1", 1000, 4000, false, 10, "0.1.0");
  MemberPart<drip::v1::ListHostsResponse> b{"c1", {}};
  *b.response.add_hosts() = Host("web-1", 4100, 8000, false, 10, "0.1.0");
  drip::v1::ListHostsResponse merged = MergeHosts({a, b});
  ASSERT_EQ(merged.hosts_size(), 1);
  EXPECT_EQ(merged.hosts(0).collector(), "c1");
  EXPECT_FALSE(merged.hosts(0).connected());
}

TEST(FleetAnswerMergeTest, ASeriesSplitBetweenOwnersIsOneLineWithEachResentSampleOnce) {
  // The dead owner stored 1000..4000 and acked up to 3000: the agent resent 4000 to the
  // heir, which stored it again with what followed.
  drip::v1::GetSeriesResponse old_owner;
  *old_owner.add_series() = SeriesOf("7@1", {1000, 2000, 3000, 4000});
  drip::v1::GetSeriesResponse heir;
  *heir.add_series() = SeriesOf("7@1", {4000, 5000, 6000});
  *heir.add_series() = SeriesOf("9@2", {6000});
  drip::v1::SeriesGap* gap = heir.add_gaps();
  gap->set_from_ms(100);
  gap->set_until_ms(900);
  gap->set_batches(1);
  *old_owner.add_gaps() = *gap;  // the same gap, known to both

  drip::v1::GetSeriesResponse merged = MergeSeries({heir, old_owner});
  ASSERT_EQ(merged.series_size(), 2);
  EXPECT_EQ(merged.series(0).instance(), "7@1");
  std::vector<int64_t> stamps;
  for (const auto& s : merged.series(0).samples()) stamps.push_back(s.timestamp_ms());
  EXPECT_EQ(stamps, (std::vector<int64_t>{1000, 2000, 3000, 4000, 5000, 6000}));
  EXPECT_EQ(merged.series(1).instance(), "9@2");
  EXPECT_EQ(merged.gaps_size(), 1);
}

TEST(FleetAnswerMergeTest, TwoDifferentSamplesAtOneInstantAreBothKept) {
  drip::v1::GetSeriesResponse a;
  *a.add_series() = SeriesOf("7@1", {1000});
  drip::v1::GetSeriesResponse b;
  drip::v1::Series* s = b.add_series();
  *s = SeriesOf("7@1", {});
  *s->add_samples() = SampleAt(1000, 1);  // same instant, another reading
  drip::v1::GetSeriesResponse merged = MergeSeries({a, b});
  ASSERT_EQ(merged.series_size(), 1);
  EXPECT_EQ(merged.series(0).samples_size(), 2);
}

drip::v1::Suspect SuspectOf(const std::string& host, double score, int64_t updated) {
  drip::v1::Suspect s;
  s.set_host(host);
  s.set_component("svc:api.service");
  s.set_instance("7@1");
  s.set_score(score);
  s.set_last_updated_s(updated);
  s.set_growth_bytes_per_hour(score * 1000);
  return s;
}

TEST(FleetAnswerMergeTest, SuspectsOfAMovedHostCountOnceAndComponentsAreRecounted) {
  drip::v1::ListSuspectsResponse c0;
  *c0.add_suspects() = SuspectOf("web-1", 0.5, 100);  // before the move
  *c0.add_suspects() = SuspectOf("web-2", 0.9, 100);
  drip::v1::ComponentSuspect* c = c0.add_components();
  c->set_component("svc:api.service");
  c->set_first_flagged_s(50);
  c->set_hosts(2);
  c->set_hosts_seen(10);
  drip::v1::ListSuspectsResponse c1;
  *c1.add_suspects() = SuspectOf("web-1", 0.7, 200);  // after it
  *c1.add_suspects() = SuspectOf("web-3", 0.6, 200);
  c = c1.add_components();
  c->set_component("svc:api.service");
  c->set_first_flagged_s(40);
  c->set_hosts(2);
  c->set_hosts_seen(12);

  drip::v1::ListSuspectsResponse merged = MergeSuspects({c0, c1});
  ASSERT_EQ(merged.suspects_size(), 3);
  EXPECT_EQ(merged.suspects(0).host(), "web-2");  // most urgent first
  EXPECT_EQ(merged.suspects(1).host(), "web-1");
  EXPECT_DOUBLE_EQ(merged.suspects(1).score(), 0.7);  // the newer evidence
  EXPECT_EQ(merged.suspects(2).host(), "web-3");
  ASSERT_EQ(merged.components_size(), 1);
  EXPECT_EQ(merged.components(0).hosts(), 3);
  EXPECT_EQ(merged.components(0).hosts_seen(), 22);
  EXPECT_EQ(merged.components(0).first_flagged_s(), 40);
  EXPECT_DOUBLE_EQ(merged.components(0).max_growth_bytes_per_hour(), 900);
}

drip::v1::LeakReport Report(const std::string& id, const std::string& state,
                            const std::string& severity, int64_t last_seen) {
  drip::v1::LeakReport r;
  r.set_id(id);
  r.set_state(state);
  r.set_severity(severity);
  r.set_last_seen_s(last_seen);
  return r;
}

TEST(FleetAnswerMergeTest, LeaksFromEveryMemberAreOrderedAsOneCollectorOrdersThem) {
  drip::v1::ListLeaksResponse c0;
  *c0.add_reports() = Report("leak-c0-1", "resolved", "critical", 900);
  *c0.add_reports() = Report("leak-c0-2", "open", "warning", 500);
  drip::v1::ListLeaksResponse c1;
  *c1.add_reports() = Report("leak-c1-1", "open", "critical", 100);
  *c1.add_reports() = Report("leak-c1-2", "acknowledged", "warning", 700);
  drip::v1::ListLeaksResponse merged = MergeLeaks({c0, c1});
  std::vector<std::string> ids;
  for (const auto& r : merged.reports()) ids.push_back(r.id());
  EXPECT_EQ(ids, (std::vector<std::string>{"leak-c1-1", "leak-c1-2", "leak-c0-2", "leak-c0-1"}));
}

TEST(FleetAnswerMergeTest, AuditEntriesAreNewestFirstUpToTheLimit) {
  drip::v1::ListAuditResponse c0;
  drip::v1::ListAuditResponse c1;
  for (int i = 0; i < 4; ++i) {
    drip::v1::AuditEntry* e = (i % 2 ? c1 : c0).add_entries();
    e->set_time_ms(1000 * i);
    e->set_id(std::to_string(i));
  }
  drip::v1::ListAuditResponse merged = MergeAudit({c0, c1}, 3);
  ASSERT_EQ(merged.entries_size(), 3);
  EXPECT_EQ(merged.entries(0).time_ms(), 3000);
  EXPECT_EQ(merged.entries(2).time_ms(), 1000);
}

}  // namespace
}  // namespace drip::collector
