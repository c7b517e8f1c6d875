#include "collector/cluster/report_ownership.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "collector/cluster/rendezvous.h"
#include "fmt/format.h"

namespace drip::collector {
namespace {

constexpr int64_t kNowS = 1'800'000'000;

HostSuspect Suspect(const std::string& host, int64_t last_updated = kNowS - 60) {
  HostSuspect h;
  h.suspect.host = host;
  h.suspect.component = "svc:api.service";
  h.suspect.last_updated = last_updated;
  return h;
}

// By reading, issue 32: any member's suspects were merged for any host, a newer time
// winning. A member speaks for the hosts placed on it, or on it just before unless they
// stream here now, and no later than the clock allows.
TEST(ReportOwnershipTest, AMemberSpeaksOnlyForHostsPlacedOnItAndNotFromTheFuture) {
  const std::vector<std::string> members = {"c0", "c1", "c2", "c3"};
  auto owns = [](const std::string& component) { return component == "svc:api.service"; };
  FleetSuspects part;
  std::vector<std::string> first, second, elsewhere;
  for (int i = 0; i < 200; ++i) {
    const std::string host = fmt::format("web-{}", i);
    const std::vector<std::string> ranking = RendezvousRanking(host, members);
    if (ranking[0] == "c1")
      first.push_back(host);
    else if (ranking[1] == "c1")
      second.push_back(host);
    else
      elsewhere.push_back(host);
    part.hosts.push_back(Suspect(host));
  }
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(second.empty());
  ASSERT_FALSE(elsewhere.empty());
  part.hosts.push_back(Suspect(first.front(), kNowS + 3600));  // an hour ahead
  HostSuspect other_component = Suspect(first.front());
  other_component.suspect.component = "svc:other.service";
  part.hosts.push_back(other_component);

  // A host this member streams now is judged by this member's own evidence: it was c1's
  // second in order, but streams to no other member.
  const std::string here = second.front();
  auto streams_here = [here](const std::string& host) { return host == here; };

  size_t refused = 0;
  const FleetSuspects kept =
      SuspectsAMemberSpeaksFor("c1", members, part, owns, streams_here, kNowS, &refused);
  EXPECT_EQ(kept.hosts.size(), first.size() + second.size() - 1);
  for (const HostSuspect& h : kept.hosts) {
    EXPECT_LE(h.suspect.last_updated, kNowS);
    EXPECT_EQ(h.suspect.component, "svc:api.service");
    EXPECT_EQ(std::find(elsewhere.begin(), elsewhere.end(), h.suspect.host), elsewhere.end())
        << h.suspect.host;
    EXPECT_NE(h.suspect.host, here);
  }
  // Another member's hosts, the one from the future and the one streaming here; a component
  // this member does not own is not read at all.
  EXPECT_EQ(refused, elsewhere.size() + 2);
}

}  // namespace
}  // namespace drip::collector
