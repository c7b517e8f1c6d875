#include "analyzer/rollout_correlation.h"

#include <string>
#include <vector>

#include "analyzer/testing/series_feed.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace drip::analyzer {
namespace {

using ::testing::HasSubstr;

using analyzer::testing::kDay;
using analyzer::testing::kHour;

// A host that ran `before` from t=0 and, when `changed_at` > 0, `after` from then on.
HostVersions Host(const std::string& name, const std::string& before, const std::string& after,
                  int64_t changed_at) {
  HostVersions h{name, {{name + "-a", before, 0}}};
  if (changed_at > 0) h.runs.push_back({name + "-b", after, changed_at});
  return h;
}

LeakingHost Leak(const std::string& name, int64_t since, int64_t flagged) {
  return LeakingHost{name, flagged, since, false};
}

TEST(RolloutCorrelationTest, LeakThatCameWithARolloutNamesTheVersionAndTheHostsLeftBehind) {
  std::vector<HostVersions> fleet;
  std::vector<LeakingHost> leaking;
  for (int i = 0; i < 6; ++i) {
    const std::string name = "web-" + std::to_string(i);
    fleet.push_back(Host(name, "1.0", "1.1", kDay + i * 600));
    leaking.push_back(Leak(name, kDay + i * 600 + 300, kDay + 9 * kHour));
  }
  for (int i = 6; i < 10; ++i) fleet.push_back(Host("web-" + std::to_string(i), "1.0", "", 0));

  RolloutFinding f = CorrelateRollout(fleet, leaking);
  EXPECT_EQ(f.verdict, RolloutVerdict::kArrivedWithVersion);
  EXPECT_EQ(f.version, "1.1");
  ASSERT_EQ(f.hosts.size(), 6u);
  for (const HostVersionFinding& h : f.hosts) {
    EXPECT_TRUE(h.began_at_change) << h.host;
    EXPECT_EQ(h.previous_version, "1.0");
  }
  ASSERT_EQ(f.versions.size(), 2u);
  EXPECT_EQ(f.versions[0].version, "1.1");
  EXPECT_EQ(f.versions[0].leaking_hosts, 6);
  EXPECT_EQ(f.versions[1].healthy_hosts, 4);
  EXPECT_EQ(f.summary,
            "arrived with version 1.1: 6 of 6 leaking hosts run it, 6 hosts began growing "
            "when it replaced the version before; 4 hosts on other versions do not leak "
            "(1.0 (4))");
}

TEST(RolloutCorrelationTest, GrowthThatBeganLongAfterTheChangeDidNotBeginWithIt) {
  std::vector<HostVersions> fleet = {Host("a", "1.0", "1.1", kDay), Host("b", "1.0", "", 0)};
  RolloutFinding f = CorrelateRollout(fleet, {Leak("a", 3 * kDay, 3 * kDay + 8 * kHour)});
  ASSERT_EQ(f.hosts.size(), 1u);
  EXPECT_FALSE(f.hosts[0].began_at_change);
  // Still only the new version leaks while the old one does not: that is the evidence.
  EXPECT_EQ(f.verdict, RolloutVerdict::kArrivedWithVersion);
  EXPECT_THAT(f.summary, ::testing::Not(HasSubstr("began growing")));
}

TEST(RolloutCorrelationTest, GrowthBeforeTheChangeIsNotTheChanges) {
  // The old instance was already climbing and was flagged before the upgrade.
  std::vector<HostVersions> fleet = {Host("a", "1.0", "1.1", kDay)};
  RolloutFinding f = CorrelateRollout(fleet, {Leak("a", kDay / 2, kDay - kHour)});
  ASSERT_EQ(f.hosts.size(), 1u);
  EXPECT_EQ(f.hosts[0].version, "1.0");
  EXPECT_FALSE(f.hosts[0].began_at_change);
  EXPECT_EQ(f.verdict, RolloutVerdict::kOneVersionEverywhere);
}

TEST(RolloutCorrelationTest, GrowthThatWentOnAcrossAnUpgradeBelongsToTheVersionBefore) {
  // Growing since half a day before the upgrade, flagged only after it: the old version
  // leaks too, on this host and on the one not upgraded.
  std::vector<HostVersions> fleet = {Host("a", "1.0", "1.1", kDay), Host("b", "1.0", "", 0)};
  RolloutFinding f =
      CorrelateRollout(fleet, {Leak("a", kDay / 2, kDay + 5 * kHour), Leak("b", kDay / 3, kDay)});
  ASSERT_EQ(f.hosts.size(), 2u);
  EXPECT_EQ(f.hosts[0].version, "1.0");
  EXPECT_FALSE(f.hosts[0].began_at_change);
  EXPECT_NE(f.verdict, RolloutVerdict::kArrivedWithVersion);
}

TEST(RolloutCorrelationTest, LeakingHostsOnSeveralVersionsClearTheRollout) {
  std::vector<HostVersions> fleet;
  std::vector<LeakingHost> leaking;
  for (int i = 0; i < 8; ++i) {
    const std::string name = "db-" + std::to_string(i);
    const bool upgraded = i < 4;
    fleet.push_back(Host(name, "5.2", "5.3", upgraded ? kDay : 0));
    if (i % 2 == 0) leaking.push_back(Leak(name, 2 * kDay, 2 * kDay + 5 * kHour));
  }
  RolloutFinding f = CorrelateRollout(fleet, leaking);
  EXPECT_EQ(f.verdict, RolloutVerdict::kAcrossVersions);
  EXPECT_EQ(f.summary,
            "not tied to a version: the leaking hosts run 5.2 (2), 5.3 (2); hosts that do not "
            "leak run 5.2 (2), 5.3 (2)");
}

TEST(RolloutCorrelationTest, OneVersionEverywhereSaysTheVersionsCannotTell) {
  std::vector<HostVersions> fleet = {Host("a", "2.0", "", 0), Host("b", "2.0", "", 0)};
  RolloutFinding f = CorrelateRollout(fleet, {Leak("a", kDay, kDay + 6 * kHour)});
  EXPECT_EQ(f.verdict, RolloutVerdict::kOneVersionEverywhere);
  EXPECT_THAT(f.summary, HasSubstr("every host runs 2.0"));
}

TEST(RolloutCorrelationTest, NoVersionsIsUnknownAndSaysWhy) {
  RolloutFinding f = CorrelateRollout({}, {Leak("a", kDay, kDay + 6 * kHour)});
  EXPECT_EQ(f.verdict, RolloutVerdict::kUnknown);
  EXPECT_TRUE(f.hosts.empty());
  EXPECT_THAT(f.summary, HasSubstr("DRIP_VERSION"));
}

TEST(RolloutCorrelationTest, DailyRestartsKeepTheVersionsEraAndEveryInstanceLeaks) {
  // Restarted every day; the leak grows in each instance of 3.1 only.
  HostVersions host{"a",
                    {{"i0", "3.0", 0},
                     {"i1", "3.0", kDay},
                     {"i2", "3.1", 2 * kDay},
                     {"i3", "3.1", 3 * kDay},
                     {"i4", "3.1", 4 * kDay}}};
  RolloutFinding f = CorrelateRollout(
      {host, Host("b", "3.0", "", 0)},
      {LeakingHost{"a", 4 * kDay + 2 * kHour, 4 * kDay + kHour, /*grows_every_instance=*/true}});
  ASSERT_EQ(f.hosts.size(), 1u);
  EXPECT_EQ(f.hosts[0].changed_s, 2 * kDay);
  EXPECT_TRUE(f.hosts[0].began_at_change);
  EXPECT_EQ(f.verdict, RolloutVerdict::kArrivedWithVersion);
}

// A suspect of the restart-reset rule grows anew in every instance: its growth did not
// begin at one change, whatever its climb's start says.
TEST(RolloutCorrelationTest, LeakingHostOfASuspectCarriesWhenAndHowItGrew) {
  Suspect suspect;
  suspect.host = "host-1";
  suspect.first_flagged = 5000;
  suspect.growth_since = 4000;
  suspect.rule = SuspectRule::kRestartReset;
  const LeakingHost host = LeakingHostOf(suspect);
  EXPECT_EQ(host.host, "host-1");
  EXPECT_EQ(host.first_flagged_s, 5000);
  EXPECT_EQ(host.growth_since_s, 4000);
  EXPECT_TRUE(host.grows_every_instance);
  suspect.rule = SuspectRule::kClimbAboveNormal;
  EXPECT_FALSE(LeakingHostOf(suspect).grows_every_instance);
}

}  // namespace
}  // namespace drip::analyzer
