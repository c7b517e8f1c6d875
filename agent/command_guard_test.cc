#include "agent/command_guard.h"

#include <unistd.h>

#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace drip::agent {
namespace {

using ::testing::HasSubstr;

drip::v1::Command Snapshot(int pid) {
  drip::v1::Command c;
  c.set_id("snap-1");
  c.mutable_snapshot()->set_pid(pid);
  return c;
}

drip::v1::Command Mitigation(const std::string& action, int pid, const std::string& unit = "") {
  drip::v1::Command c;
  c.set_id("mit-1");
  c.mutable_mitigation()->set_action(action);
  c.mutable_mitigation()->set_pid(pid);
  c.mutable_mitigation()->set_unit(unit);
  return c;
}

TEST(CommandGuardTest, GlobMatchesLikeFnmatchWithoutClasses) {
  EXPECT_TRUE(MatchesGlob("svc:*", "svc:nginx.service"));
  EXPECT_TRUE(MatchesGlob("svc:api-*.service", "svc:api-7.service"));
  EXPECT_TRUE(MatchesGlob("proc:redis-??????", "proc:redis-server"));
  EXPECT_TRUE(MatchesGlob("*", ""));
  EXPECT_FALSE(MatchesGlob("svc:*", "proc:svc:x"));
  EXPECT_FALSE(MatchesGlob("svc:api-*.service", "svc:api-7.socket"));
  EXPECT_FALSE(MatchesGlob("", "x"));
  // Many stars against a long near-miss must stay fast (no exponential backtracking).
  EXPECT_FALSE(MatchesGlob("*a*a*a*a*a*a*a*a*b", std::string(5000, 'a')));
}

TEST(CommandGuardTest, TargetOutsideTheAllowListIsRefusedNamingItsComponent) {
  CommandGuardOptions options;
  options.allowed_components = {"svc:*"};
  CommandGuard guard(options);
  absl::StatusOr<std::string> self = guard.ComponentOfPid(getpid());
  ASSERT_TRUE(self.ok()) << self.status();
  // This test runs outside any systemd service, so it is a proc: component.
  if (self->rfind("svc:", 0) == 0) GTEST_SKIP() << "the test itself runs in " << *self;
  absl::Status snapshot = guard.Admit(Snapshot(getpid()));
  EXPECT_EQ(snapshot.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(snapshot.message()), HasSubstr(*self));
  EXPECT_THAT(std::string(snapshot.message()), HasSubstr("commands.allowed_components (svc:*)"));
  EXPECT_EQ(guard.Admit(Mitigation("signal-process", getpid())).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(CommandGuardTest, TargetInsideTheAllowListIsAdmitted) {
  CommandGuardOptions options;
  CommandGuard probe(options);
  absl::StatusOr<std::string> self = probe.ComponentOfPid(getpid());
  ASSERT_TRUE(self.ok()) << self.status();
  options.allowed_components = {"svc:never-*", *self};
  CommandGuard guard(options);
  EXPECT_TRUE(guard.Admit(Snapshot(getpid())).ok());
  EXPECT_TRUE(guard.Admit(Mitigation("signal-process", getpid())).ok());
}

// What the agent's last pass read from units' cgroups.
std::function<bool(std::string_view)> Observed(std::set<std::string> components) {
  return [components = std::move(components)](std::string_view c) {
    return components.count(std::string(c)) > 0;
  };
}

TEST(CommandGuardTest, RestartUnitIsJudgedByTheUnitItNames) {
  CommandGuardOptions options;
  options.allowed_components = {"svc:api-*.service", "svc:web.service"};
  options.observed_unit = Observed({"svc:api-3.service", "svc:cron.service"});
  CommandGuard guard(options);
  EXPECT_TRUE(guard.Admit(Mitigation("restart-unit", 0, "api-3.service")).ok());
  absl::Status refused = guard.Admit(Mitigation("restart-unit", 0, "cron.service"));
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("unit cron.service is svc:cron.service"));
}

// A compromised collector names the unit: it must not get a stopped unit started, nor a
// unit the host cannot do without restarted, nor a user's unit that shares a system
// service's name restarted on the system bus.
TEST(CommandGuardTest, RestartUnitRefusesUnitsItDidNotSeeRunningAndUnitsAHostNeeds) {
  CommandGuardOptions options;
  options.allowed_components = {"svc:*"};
  // sshd.service and dbus.service are running system services here; the user's own
  // "web.service" was named proc:, so it is not among them.
  options.observed_unit = Observed({"svc:api-3.service", "svc:sshd.service", "svc:dbus.service",
                                    "svc:systemd-journald.service", "svc:getty@tty1.service"});
  CommandGuard guard(options);
  EXPECT_TRUE(guard.Admit(Mitigation("restart-unit", 0, "api-3.service")).ok());
  for (const char* unit : {"systemd-poweroff.service", "debug-shell.service", "web.service"}) {
    absl::Status refused = guard.Admit(Mitigation("restart-unit", 0, unit));
    EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied) << unit;
  }
  EXPECT_THAT(std::string(guard.Admit(Mitigation("restart-unit", 0, "web.service")).message()),
              HasSubstr("not a system service this agent saw running"));
  for (const char* unit : {"sshd.service", "dbus.service", "systemd-journald.service",
                           "getty@tty1.service", "drip-agent.service", "user@1000.service"}) {
    absl::Status refused = guard.Admit(Mitigation("restart-unit", 0, unit));
    EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied) << unit;
    EXPECT_THAT(std::string(refused.message()), HasSubstr("one Drip never restarts")) << unit;
  }
  // Without a view of the host's units, nothing is restarted.
  CommandGuard blind(CommandGuardOptions{});
  EXPECT_EQ(blind.Admit(Mitigation("restart-unit", 0, "api-3.service")).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(CommandGuardTest, RecommendTouchesNothingAndIsAlwaysAdmitted) {
  CommandGuardOptions options;
  options.allowed_components = {};
  CommandGuard guard(options);
  EXPECT_TRUE(guard.Admit(Mitigation("recommend", getpid())).ok());
}

TEST(CommandGuardTest, SnapshotsBeyondTheHourlyRateAreRefusedUntilTheWindowMoves) {
  auto now = std::chrono::steady_clock::time_point(std::chrono::hours(10));
  CommandGuardOptions options;
  options.allowed_components = {"*"};
  options.max_snapshots_per_hour = 2;
  options.now = [&now] { return now; };
  CommandGuard guard(options);
  EXPECT_TRUE(guard.Admit(Snapshot(getpid())).ok());
  now += std::chrono::minutes(10);
  EXPECT_TRUE(guard.Admit(Snapshot(getpid())).ok());
  absl::Status third = guard.Admit(Snapshot(getpid()));
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(third.message()), HasSubstr("next is allowed in 50m"));
  now += std::chrono::minutes(50);
  EXPECT_TRUE(guard.Admit(Snapshot(getpid())).ok());
}

TEST(CommandGuardTest, ZeroSnapshotsPerHourRefusesEverySnapshot) {
  CommandGuardOptions options;
  options.allowed_components = {"*"};
  options.max_snapshots_per_hour = 0;
  CommandGuard guard(options);
  EXPECT_EQ(guard.Admit(Snapshot(getpid())).code(), absl::StatusCode::kResourceExhausted);
}

// A pid that names no process now is refused even with an allow-list of "*": by the time
// a runner looked, a new process could hold it, one nobody checked.
TEST(CommandGuardTest, APidThatNamesNoProcessIsNeverAdmitted) {
  CommandGuardOptions options;
  options.allowed_components = {"*"};
  options.proc_root = "/nonexistent-proc";
  CommandGuard guard(options);
  for (const drip::v1::Command& command :
       {Snapshot(getpid()), Mitigation("signal-process", getpid())}) {
    absl::Status status = guard.Admit(command);
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("a target this agent cannot name is never acted on"));
  }
  EXPECT_EQ(guard.Admit(Snapshot(0)).code(), absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace drip::agent
