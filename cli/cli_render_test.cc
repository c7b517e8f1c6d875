#include <gtest/gtest.h>

#include <sstream>

#include "cli/cluster_command.h"
#include "cli/exit_codes.h"
#include "cli/hosts_command.h"
#include "cli/query_client.h"
#include "cli/series_command.h"
#include "cli/suspects_command.h"
#include "cli/table_printer.h"
#include "nlohmann/json.hpp"

namespace drip::cli {
namespace {

drip::v1::GetSeriesResponse TwoInstanceSeries() {
  drip::v1::GetSeriesResponse response;
  for (int i = 0; i < 2; ++i) {
    auto* s = response.add_series();
    s->set_host("web-1");
    s->set_component("svc:api.service");
    s->set_instance(i == 0 ? "100@1700000000" : "200@1700003600");
    auto* sample = s->add_samples();
    sample->set_timestamp_ms(1'700'000'000'000 + i * 3'600'000);
    sample->mutable_process()->set_anon_rss_bytes(100u << 20);
    sample->mutable_process()->set_swap_bytes(1u << 20);
  }
  return response;
}

TEST(SeriesCommandTest, JsonNamesEveryInstanceAndItsUnreclaimableBytes) {
  std::ostringstream out;
  RenderSeries(TwoInstanceSeries(), /*json=*/true, out);
  auto j = nlohmann::json::parse(out.str());
  ASSERT_EQ(j["series"].size(), 2u);
  EXPECT_EQ(j["series"][1]["instance"], "200@1700003600");
  EXPECT_EQ(j["series"][0]["samples"][0]["unreclaimable_bytes"], (100u << 20) + (1u << 20));
  EXPECT_EQ(j["series"][0]["samples"][0]["kind"], "process");
}

TEST(SeriesCommandTest, TableHasOneRowPerSampleUnderAHeader) {
  std::ostringstream out;
  RenderSeries(TwoInstanceSeries(), /*json=*/false, out);
  std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  EXPECT_NE(text.find("TIME (UTC)"), std::string::npos);
  EXPECT_NE(text.find("2023-11-14 22:13:20"), std::string::npos);
  EXPECT_NE(text.find("101.0 MiB"), std::string::npos);
}

TEST(HostsCommandTest, TableShowsStateAndLastSeen) {
  drip::v1::ListHostsResponse response;
  auto* h = response.add_hosts();
  h->set_host("db-7");
  h->set_connected(true);
  h->set_last_seen_ms(1'000'000);
  h->set_agent_version("0.1.0");
  (*h->mutable_labels())["kernel"] = "6.1.0";
  (*h->mutable_labels())["env"] = "prod";
  std::ostringstream out;
  RenderHosts(response, /*json=*/false, /*now_ms=*/1'030'000, out);
  EXPECT_NE(out.str().find("db-7"), std::string::npos);
  EXPECT_NE(out.str().find("connected"), std::string::npos);
  EXPECT_NE(out.str().find("30s ago"), std::string::npos);
  EXPECT_NE(out.str().find("env=prod"), std::string::npos);
}

drip::v1::ListMembersResponse TwoMembersEtcdDown() {
  drip::v1::ListMembersResponse r;
  r.set_mode("etcd");
  r.set_etcd_up(false);
  r.set_etcd_endpoint("10.0.0.11:2379");
  for (const char* name : {"collector-a", "collector-b"}) {
    drip::v1::ClusterMember* m = r.add_members();
    m->set_name(name);
    m->set_address(std::string(name) + ":7070");
    m->set_started_ms(1'700'000'000'000);
    m->set_hosts_connected(name[10] == 'a' ? 12 : 7);
    m->set_self(name[10] == 'a');
  }
  r.mutable_members(0)->set_hosts_placed(3);
  for (const char* host : {"db-1", "web-1", "web-4"}) r.mutable_members(0)->add_hosts(host);
  r.mutable_members(1)->set_hosts_placed(205);
  for (const char* host : {"web-2", "web-3"}) r.mutable_members(1)->add_hosts(host);
  return r;
}

TEST(ClusterCommandTest, TableSaysWhenEtcdIsDownAndMembersAreFrozen) {
  std::ostringstream out;
  drip::cli::RenderCluster(TwoMembersEtcdDown(), {}, 1'700'000'360'000, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("2 collectors; etcd DOWN (10.0.0.11:2379)"), std::string::npos) << text;
  EXPECT_NE(text.find("ownership is frozen"), std::string::npos) << text;
  EXPECT_NE(text.find("collector-b:7070"), std::string::npos) << text;
  EXPECT_NE(text.find("(answered)"), std::string::npos) << text;
}

TEST(ClusterCommandTest, TableNamesTheHostsEachMemberOwnsAndHowManyMore) {
  std::ostringstream out;
  drip::cli::RenderCluster(TwoMembersEtcdDown(), {}, 1'700'000'360'000, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("collector-a  db-1 web-1 web-4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("collector-b  web-2 web-3 (and 203 more)\n"), std::string::npos) << text;
}

TEST(ClusterCommandTest, HostSaysWhichMemberHoldsIt) {
  drip::v1::ListMembersResponse r = TwoMembersEtcdDown();
  for (auto& m : *r.mutable_members()) m.clear_hosts();
  r.mutable_members(1)->add_hosts("web-3");
  drip::cli::ClusterOptions options;
  options.host = "web-3";
  std::ostringstream out;
  drip::cli::RenderCluster(r, options, 0, out);
  EXPECT_EQ(out.str(), "web-3 is placed on collector-b at collector-b:7070\n");
  options.json = true;
  std::ostringstream json;
  drip::cli::RenderCluster(r, options, 0, json);
  const nlohmann::json j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["host"]["member"], "collector-b");
  EXPECT_EQ(j["members"][1]["hosts"], nlohmann::json::array({"web-3"}));
}

TEST(ClusterCommandTest, JsonListsEveryMember) {
  std::ostringstream out;
  drip::cli::ClusterOptions options;
  options.json = true;
  drip::cli::RenderCluster(TwoMembersEtcdDown(), options, 0, out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["mode"], "etcd");
  EXPECT_EQ(j["etcd_up"], false);
  ASSERT_EQ(j["members"].size(), 2u);
  EXPECT_EQ(j["members"][0]["hosts_connected"], 12);
  EXPECT_EQ(j["members"][0]["self"], true);
  EXPECT_EQ(j["members"][0]["hosts_placed"], 3);
  EXPECT_EQ(j["members"][0]["hosts"], nlohmann::json::array({"db-1", "web-1", "web-4"}));
}

TEST(QueryClientTest, UnreachableCollectorIsUnavailableNamingTheAddress) {
  // Port 1 on loopback: nothing listens there, the connection is refused at once.
  QueryClient client("127.0.0.1:1", std::chrono::seconds(5));
  auto hosts = client.ListHosts();
  ASSERT_FALSE(hosts.ok());
  EXPECT_EQ(hosts.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(std::string(hosts.status().message()).find("cannot reach collector at 127.0.0.1:1"),
            std::string::npos);
  EXPECT_EQ(ExitCodeFor(hosts.status()), kExitUnreachable);
}

TEST(TablePrinterTest, FormatsAgoInTheLargestSensibleUnit) {
  EXPECT_EQ(FormatAgo(0, 5000), "never");
  EXPECT_EQ(FormatAgo(1000, 61'000), "60s ago");
  EXPECT_EQ(FormatAgo(1000, 1000 + 3 * 3'600'000), "3h ago");
}

drip::v1::ListSuspectsResponse OneSuspect() {
  drip::v1::ListSuspectsResponse response;
  auto* s = response.add_suspects();
  s->set_host("web-1");
  s->set_component("svc:api.service");
  s->set_instance("100@1700000000");
  s->set_first_flagged_s(1'700'000'000);
  s->set_growth_bytes_per_hour(4.0 * (1 << 20));
  s->set_current_bytes(600u << 20);
  s->set_normal_bytes(500u << 20);
  s->set_eta_to_oom_seconds(7.5 * 3600);
  s->set_score(0.9);
  s->set_rule("climb_above_normal");
  s->set_reason("floor rose steadily");
  auto* c = response.add_components();
  c->set_component("svc:api.service");
  c->set_hosts(1);
  c->set_hosts_seen(12);
  return response;
}

TEST(SuspectsCommandTest, TableShowsGrowthEtaAndTheReason) {
  std::ostringstream out;
  RenderSuspects(OneSuspect(), false, 1'700'003'600'000, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("4.0 MiB/h"), std::string::npos) << text;
  EXPECT_NE(text.find("7.5 h"), std::string::npos) << text;
  EXPECT_NE(text.find("floor rose steadily"), std::string::npos) << text;
}

TEST(SuspectsCommandTest, JsonHasNullEtaWhenHostMemoryIsUnknown) {
  drip::v1::ListSuspectsResponse response = OneSuspect();
  response.mutable_suspects(0)->clear_eta_to_oom_seconds();
  std::ostringstream out;
  RenderSuspects(response, true, 0, out);
  auto json = nlohmann::json::parse(out.str());
  EXPECT_TRUE(json["suspects"][0]["eta_to_oom_seconds"].is_null());
  EXPECT_EQ(json["components"][0]["hosts_seen"], 12);
}

TEST(SuspectsCommandTest, NoSuspectsSaysSo) {
  std::ostringstream out;
  RenderSuspects(drip::v1::ListSuspectsResponse(), false, 0, out);
  EXPECT_EQ(out.str(), "no leak suspects\n");
}

}  // namespace
}  // namespace drip::cli
