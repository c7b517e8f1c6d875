#include "collector/query/suspects_proto.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace drip::collector {
namespace {

FleetSuspects OneSuspectWithADiagnosis() {
  FleetSuspects fleet;
  HostSuspect& h = fleet.hosts.emplace_back();
  h.suspect.host = "web-1";
  h.suspect.component = "svc:leaky.service";
  h.suspect.instance = "cg@7";
  h.process_instance = "4242@100";
  h.suspect.first_flagged = 1'700'000'000;
  h.suspect.last_updated = 1'700'003'600;
  h.suspect.growth_since = 1'699'990'000;
  h.suspect.growth_bytes_per_hour = 64e6;
  h.suspect.score = 0.9;
  h.suspect.current_bytes = 512 << 20;
  h.suspect.normal_bytes = 256 << 20;
  h.suspect.eta_to_oom_seconds = 7200;
  h.suspect.rule = analyzer::SuspectRule::kRestartReset;
  h.suspect.reason = "grows in every instance";
  SnapshotAttempt& snapshot = h.snapshot.emplace();
  snapshot.command_id = "snapshot-3";
  snapshot.state = SnapshotAttempt::State::kDone;
  snapshot.instance = "4242@100";
  snapshot.requested_ms = 1'700'003'000'000;
  snapshot.finished_ms = 1'700'003'060'000;
  snapshot.diagnosis.outcome = diagnoser::Outcome::kLeak;
  snapshot.diagnosis.summary = "one leaking stack";
  diagnoser::DiagnosedStack& stack = snapshot.diagnosis.stacks.emplace_back();
  stack.verdict = diagnoser::Verdict::kLeak;
  stack.growth_bytes_per_hour = 60e6;
  StackFrame& frame = stack.frames.emplace_back();
  frame.function = "RememberSession";
  analyzer::ComponentSuspect& c = fleet.components.emplace_back();
  c.component = "svc:leaky.service";
  c.first_flagged = 1'700'000'000;
  c.hosts = 1;
  c.hosts_seen = 4;
  c.max_growth_bytes_per_hour = 64e6;
  return fleet;
}

// A cluster member reads another's suspects back from its ListSuspects answer: what the
// report's owner folds in must be what that member's detector and snapshot found.
TEST(SuspectsProtoTest, SuspectsReadBackFromTheWireAreTheOnesSent) {
  const FleetSuspects sent = OneSuspectWithADiagnosis();
  drip::v1::ListSuspectsResponse wire;
  FleetSuspectsToProto(sent, &wire);
  std::vector<std::string> skipped;
  std::optional<FleetSuspects> read = FleetSuspectsFromProto(wire, &skipped);
  EXPECT_TRUE(skipped.empty());
  ASSERT_EQ(read->hosts.size(), 1u);
  const HostSuspect& h = read->hosts[0];
  EXPECT_EQ(h.suspect.host, "web-1");
  EXPECT_EQ(h.suspect.instance, "cg@7");
  EXPECT_EQ(h.target_instance(), "4242@100");
  EXPECT_EQ(h.suspect.growth_since, 1'699'990'000);
  EXPECT_EQ(h.suspect.rule, analyzer::SuspectRule::kRestartReset);
  ASSERT_TRUE(h.suspect.eta_to_oom_seconds.has_value());
  EXPECT_EQ(*h.suspect.eta_to_oom_seconds, 7200);
  ASSERT_TRUE(h.snapshot.has_value());
  EXPECT_EQ(h.snapshot->state, SnapshotAttempt::State::kDone);
  EXPECT_EQ(h.snapshot->finished_ms, 1'700'003'060'000);
  ASSERT_EQ(h.snapshot->diagnosis.stacks.size(), 1u);
  EXPECT_EQ(h.snapshot->diagnosis.stacks[0].frames[0].function, "RememberSession");
  ASSERT_EQ(read->components.size(), 1u);
  EXPECT_EQ(read->components[0].hosts_seen, 4);
  // And written again, it is the same answer.
  drip::v1::ListSuspectsResponse again;
  FleetSuspectsToProto(*read, &again);
  EXPECT_EQ(again.SerializeAsString(), wire.SerializeAsString());
}

// A newer member, mid-upgrade, may know a rule this one does not: its other suspects
// still count, and the one left out is named.
TEST(SuspectsProtoTest, ASuspectWithARuleThisBuildDoesNotKnowIsLeftOutAndNamed) {
  drip::v1::ListSuspectsResponse wire;
  FleetSuspects sent = OneSuspectWithADiagnosis();
  sent.hosts.push_back(sent.hosts[0]);
  sent.hosts[1].suspect.host = "web-2";
  FleetSuspectsToProto(sent, &wire);
  wire.mutable_suspects(0)->set_rule("lunar_climb");
  std::vector<std::string> skipped;
  const FleetSuspects read = FleetSuspectsFromProto(wire, &skipped);
  ASSERT_EQ(read.hosts.size(), 1u);
  EXPECT_EQ(read.hosts[0].suspect.host, "web-2");
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("web-1"), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[0].find("lunar_climb"), std::string::npos) << skipped[0];
}

TEST(FleetSuspectsTest, APeersSuspectsAddUpWithAMovedHostCountedOnceByItsFresherEvidence) {
  FleetSuspects mine = OneSuspectWithADiagnosis();
  FleetSuspects theirs = OneSuspectWithADiagnosis();
  theirs.hosts[0].suspect.last_updated += 300;  // the host moved there
  theirs.hosts[0].suspect.growth_bytes_per_hour = 70e6;
  HostSuspect other = theirs.hosts[0];
  other.suspect.host = "web-2";
  theirs.hosts.push_back(other);
  theirs.components[0].hosts = 2;
  theirs.components[0].hosts_seen = 6;
  AddPeerSuspects(theirs, &mine);
  ASSERT_EQ(mine.hosts.size(), 2u);
  EXPECT_EQ(mine.hosts[0].suspect.host, "web-1");
  EXPECT_EQ(mine.hosts[0].suspect.growth_bytes_per_hour, 70e6);
  EXPECT_EQ(mine.hosts[1].suspect.host, "web-2");
  ASSERT_EQ(mine.components.size(), 1u);
  EXPECT_EQ(mine.components[0].hosts, 3);
  EXPECT_EQ(mine.components[0].hosts_seen, 10);
}

}  // namespace
}  // namespace drip::collector
