#include "collector/cluster/rendezvous.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "fmt/format.h"

namespace drip::collector {
namespace {

std::vector<std::string> Hosts(int n) {
  std::vector<std::string> hosts;
  for (int i = 0; i < n; ++i) hosts.push_back(fmt::format("web-{:05d}.example.internal", i));
  return hosts;
}

TEST(RendezvousTest, EveryMemberGetsAFairShare) {
  const std::vector<std::string> members = {"c0", "c1", "c2"};
  std::map<std::string, int> owned;
  for (const std::string& host : Hosts(30000)) ++owned[RendezvousOwner(host, members)];
  // 10000 each expected; with 30000 hosts the standard deviation is ~82, so 9600-10400
  // fails with odds below one in 10^6 for a good hash.
  for (const std::string& m : members) {
    EXPECT_GT(owned[m], 9600) << m;
    EXPECT_LT(owned[m], 10400) << m;
  }
}

TEST(RendezvousTest, AJoiningMemberTakesAboutAQuarterAndOnlyFromOthers) {
  const std::vector<std::string> three = {"c0", "c1", "c2"};
  const std::vector<std::string> four = {"c0", "c1", "c2", "c3"};
  int moved = 0;
  const std::vector<std::string> hosts = Hosts(20000);
  for (const std::string& host : hosts) {
    const std::string before = RendezvousOwner(host, three);
    const std::string after = RendezvousOwner(host, four);
    if (before != after) {
      ++moved;
      EXPECT_EQ(after, "c3") << host << " moved between old members";
    }
  }
  EXPECT_GT(moved, 4600);  // 5000 expected; sd ~61
  EXPECT_LT(moved, 5400);
}

TEST(RendezvousTest, ALeavingMemberHandsOnOnlyItsOwnHosts) {
  const std::vector<std::string> three = {"c0", "c1", "c2"};
  const std::vector<std::string> two = {"c0", "c2"};
  for (const std::string& host : Hosts(5000)) {
    const std::string before = RendezvousOwner(host, three);
    if (before != "c1") {
      EXPECT_EQ(RendezvousOwner(host, two), before) << host;
    }
  }
}

// The order a relayed command tries the members in: the owner first, then, for each
// member that leaves, the one its hosts go to.
TEST(RendezvousTest, TheRankingStartsWithTheOwnerAndNamesWhereEachHostGoesNext) {
  const std::vector<std::string> four = {"c0", "c1", "c2", "c3"};
  for (const std::string& host : Hosts(2000)) {
    const std::vector<std::string> ranking = RendezvousRanking(host, {"c3", "c1", "c0", "c2"});
    ASSERT_EQ(ranking.size(), 4u);
    EXPECT_EQ(ranking[0], RendezvousOwner(host, four)) << host;
    std::vector<std::string> left = four;
    for (size_t i = 0; i + 1 < ranking.size(); ++i) {
      std::erase(left, ranking[i]);
      EXPECT_EQ(ranking[i + 1], RendezvousOwner(host, left)) << host << " after " << ranking[i];
    }
  }
  EXPECT_TRUE(RendezvousRanking("web-1", {}).empty());
}

TEST(RendezvousTest, TheOwnerDoesNotDependOnOrderAndIsStableAcrossBuilds) {
  EXPECT_EQ(RendezvousOwner("web-1", {"c0", "c1", "c2"}),
            RendezvousOwner("web-1", {"c2", "c0", "c1"}));
  EXPECT_EQ(RendezvousOwner("web-1", {}), "");
  // Fixed values (FNV-1a 64 of member, NUL, host; then fmix64, computed independently):
  // a change of the hash would move every host of a running fleet during an upgrade.
  EXPECT_EQ(RendezvousWeight("c0", "web-1"), 13909044831688100536ULL);
  EXPECT_EQ(RendezvousWeight("c1", "web-1"), 10108821290641701081ULL);
  EXPECT_EQ(RendezvousWeight("", ""), 13331581593930102267ULL);
  EXPECT_EQ(RendezvousOwner("web-1", {"c0", "c1", "c2"}), "c0");
  EXPECT_NE(RendezvousWeight("ab", "c"), RendezvousWeight("a", "bc"));
}

}  // namespace
}  // namespace drip::collector
