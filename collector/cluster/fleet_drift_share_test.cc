#include "collector/cluster/fleet_drift_share.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace drip::collector {
namespace {

analyzer::ComponentDrift Drift(int32_t seen, int32_t climbing, int64_t rise) {
  analyzer::ComponentDrift d;
  d.hosts_seen = seen;
  d.hosts_climbing = climbing;
  d.hosts_by_band = {seen - climbing, climbing, 0, 0, 0};
  d.longest_released_rise_s = rise;
  d.hosts_releasing = rise > 0 ? 1 : 0;
  return d;
}

TEST(FleetDriftShareTest, WhatAMemberSharesReadsBackTheSame) {
  const std::vector<std::pair<std::string, analyzer::ComponentDrift>> drifts = {
      {"svc:api.service", Drift(40, 3, 7200)}, {"proc:redis-server", Drift(2, 0, 0)}};
  auto decoded = DecodeFleetDrift(EncodeFleetDrift(drifts));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ(decoded->at("svc:api.service"), drifts[0].second);
  EXPECT_EQ(decoded->at("proc:redis-server"), drifts[1].second);
}

TEST(FleetDriftShareTest, TheOthersSharesAddUpPerComponentAndAnUnreadableOneIsNamed) {
  std::map<std::string, std::string> shares = {
      {"c1", EncodeFleetDrift({{"svc:api.service", Drift(10, 2, 600)}})},
      {"c2", EncodeFleetDrift(
                 {{"svc:api.service", Drift(5, 1, 1800)}, {"svc:db.service", Drift(3, 0, 0)}})},
      {"c3", R"({"v":2,"components":{}})"},
      {"c4", R"({"v":1,"components":{"svc:x":[1,2,3]}})"},
      {"c5", R"({"v":1,"components":{"svc:x":[0,0,0,0,0,0,-1,0,0,0,0]}})"}};
  std::vector<std::string> unreadable;
  std::map<std::string, analyzer::ComponentDrift> sum = SumPeerDrift(shares, &unreadable);
  ASSERT_EQ(sum.size(), 2u);
  EXPECT_EQ(sum["svc:api.service"].hosts_seen, 15);
  EXPECT_EQ(sum["svc:api.service"].hosts_climbing, 3);
  EXPECT_EQ(sum["svc:api.service"].longest_released_rise_s, 1800);
  EXPECT_EQ(sum["svc:db.service"].hosts_seen, 3);
  ASSERT_EQ(unreadable.size(), 3u);
  EXPECT_NE(unreadable[0].find("c3"), std::string::npos);
  EXPECT_NE(unreadable[0].find("format 2"), std::string::npos) << unreadable[0];
  EXPECT_NE(unreadable[1].find("components.svc:x"), std::string::npos) << unreadable[1];
  EXPECT_NE(unreadable[2].find("-1 is not a count"), std::string::npos) << unreadable[2];
}

}  // namespace
}  // namespace drip::collector
