#include "agent/mitigation_executor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/proc_files.h"
#include "fmt/format.h"
#include "prometheus/metric_family.h"

namespace drip::agent {
namespace {

// A real child process that sleeps until signalled, named "drip-victim", killed at the
// end of the test if the test did not.
class Victim {
 public:
  Victim() {
    int ready[2];
    if (pipe(ready) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      // The test runner may block signals in some thread; the victim must take them.
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      signal(SIGTERM, SIG_DFL);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      prctl(PR_SET_NAME, "drip-victim");
      close(ready[0]);
      (void)!write(ready[1], "x", 1);
      for (;;) pause();
    }
    close(ready[1]);
    char c;
    (void)!read(ready[0], &c, 1);  // the name is set once this returns
    close(ready[0]);
  }
  ~Victim() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  int pid() const { return pid_; }

  // "PID@START" as the samplers name it.
  std::string Instance() const {
    std::string stat_text, proc_stat;
    EXPECT_TRUE(ReadProcFile(fmt::format("/proc/{}/stat", pid_), &stat_text).ok());
    EXPECT_TRUE(ReadProcFile("/proc/stat", &proc_stat).ok());
    auto stat = ParseProcStat(stat_text);
    auto boot = ParseBootTime(proc_stat);
    EXPECT_TRUE(stat.ok() && boot.ok());
    if (!stat.ok() || !boot.ok()) return "";
    return fmt::format("{}@{}", pid_,
                       *boot + static_cast<int64_t>(stat->start_ticks / sysconf(_SC_CLK_TCK)));
  }

  // The signal that ended it, waiting up to 10 s; 0 if it did not end.
  int WaitForSignal() {
    for (int i = 0; i < 1000; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
  }

  bool StillRuns() {
    int status = 0;
    return waitpid(pid_, &status, WNOHANG) == 0;
  }

 private:
  int pid_ = -1;
  bool reaped_ = false;
};

drip::v1::Command Signal(int pid, const std::string& instance, int signal = 0,
                         bool dry_run = false) {
  drip::v1::Command command;
  command.set_id("m1");
  auto* m = command.mutable_mitigation();
  m->set_report_id("r-42");
  m->set_action("signal-process");
  m->set_pid(pid);
  m->set_instance(instance);
  m->set_signal(signal);
  m->set_dry_run(dry_run);
  m->set_component("proc:drip-victim");
  return command;
}

drip::v1::Command Restart(const std::string& unit, bool dry_run = false) {
  drip::v1::Command command;
  command.set_id("m2");
  auto* m = command.mutable_mitigation();
  m->set_report_id("r-43");
  m->set_action("restart-unit");
  m->set_unit(unit);
  m->set_dry_run(dry_run);
  return command;
}

MitigationExecutorOptions Allowing(std::set<std::string> actions) {
  MitigationExecutorOptions options;
  options.allowed_actions = std::move(actions);
  return options;
}

class FakeRestarter : public UnitRestarter {
 public:
  absl::StatusOr<std::string> Restart(const std::string& unit) override {
    restarted.push_back(unit);
    if (!fail_with.ok()) return fail_with;
    return std::string("/org/freedesktop/systemd1/job/77");
  }
  absl::StatusOr<std::string> ActiveState(const std::string& unit) override {
    asked.push_back(unit);
    if (!fail_with.ok()) return fail_with;
    return state;
  }
  std::string state = "active";
  std::vector<std::string> restarted;
  std::vector<std::string> asked;
  absl::Status fail_with = absl::OkStatus();
};

TEST(MitigationExecutorTest, SignalProcessSendsSigtermToTheRunningInstance) {
  Victim victim;
  ASSERT_GT(victim.pid(), 0);
  MitigationExecutor executor(Allowing({"signal-process"}));
  drip::v1::CommandResult r = executor.Execute(Signal(victim.pid(), victim.Instance()));
  EXPECT_EQ(r.command_id(), "m1");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r.refused());
  EXPECT_EQ(r.detail(), fmt::format("sent SIGTERM to pid {} (drip-victim)", victim.pid()));
  EXPECT_EQ(victim.WaitForSignal(), SIGTERM);
}

TEST(MitigationExecutorTest, SignalProcessSendsTheSignalAsked) {
  Victim victim;
  MitigationExecutor executor(Allowing({"signal-process"}));
  drip::v1::CommandResult r = executor.Execute(Signal(victim.pid(), victim.Instance(), SIGKILL));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.detail(), fmt::format("sent SIGKILL to pid {} (drip-victim)", victim.pid()));
  EXPECT_EQ(victim.WaitForSignal(), SIGKILL);
}

TEST(MitigationExecutorTest, DryRunLeavesTheProcessRunningAndSaysWhatItWouldDo) {
  Victim victim;
  MitigationExecutor executor(Allowing({"signal-process"}));
  drip::v1::CommandResult r =
      executor.Execute(Signal(victim.pid(), victim.Instance(), 0, /*dry_run=*/true));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.detail(), fmt::format("would send SIGTERM to pid {} (drip-victim)", victim.pid()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(victim.StillRuns());
}

TEST(MitigationExecutorTest, StaleInstanceIsRefusedAndNothingIsSent) {
  Victim victim;
  MitigationExecutor executor(Allowing({"signal-process"}));
  // The same pid, but as an instance that started in 2001: the pid was recycled.
  drip::v1::CommandResult r =
      executor.Execute(Signal(victim.pid(), fmt::format("{}@1000000000", victim.pid())));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("is not instance"), std::string::npos) << r.error();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(victim.StillRuns());
}

TEST(MitigationExecutorTest, SignalWithoutAnInstanceIsRefused) {
  Victim victim;
  MitigationExecutor executor(Allowing({"signal-process"}));
  drip::v1::CommandResult r = executor.Execute(Signal(victim.pid(), ""));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("no instance"), std::string::npos) << r.error();
  // An instance of another pid is no better.
  r = executor.Execute(Signal(victim.pid(), fmt::format("{}@1700000000", victim.pid() + 1)));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("does not name pid"), std::string::npos) << r.error();
  EXPECT_TRUE(victim.StillRuns());
}

TEST(MitigationExecutorTest, ProcessThatIsGoneFails) {
  MitigationExecutor executor(Allowing({"signal-process"}));
  drip::v1::CommandResult r = executor.Execute(Signal(0x3ffffff0, "1073741808@1700000000"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("no longer runs"), std::string::npos) << r.error();
}

TEST(MitigationExecutorTest, InitAndTheAgentItselfAreNeverSignalled) {
  MitigationExecutor executor(Allowing({"signal-process"}));
  drip::v1::CommandResult r = executor.Execute(Signal(1, "1@1700000000"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("pid 1"), std::string::npos) << r.error();
  const std::string self = fmt::format("{}@0", getpid());
  r = executor.Execute(Signal(getpid(), self));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("this agent itself"), std::string::npos) << r.error();
  r = executor.Execute(Signal(-5, "x"));
  EXPECT_FALSE(r.ok());
  // Still here to check it.
}

// "PID@START" of process `pid` as `proc_root` numbers it.
std::string InstanceIn(const std::string& proc_root, int pid) {
  std::string stat_text, proc_stat;
  if (!ReadProcFile(fmt::format("{}/{}/stat", proc_root, pid), &stat_text).ok() ||
      !ReadProcFile(proc_root + "/stat", &proc_stat).ok()) {
    return "";
  }
  auto stat = ParseProcStat(stat_text);
  auto boot = ParseBootTime(proc_stat);
  if (!stat.ok() || !boot.ok()) return "";
  return fmt::format("{}@{}", pid,
                     *boot + static_cast<int64_t>(stat->start_ticks / sysconf(_SC_CLK_TCK)));
}

// An agent in a container reads the host's processes through a /proc of another pid
// namespace (proc_root: /host/proc): the pid in a command is that namespace's. The
// signal must reach the process that /proc names, not whatever the agent's own namespace
// numbers the same (here pid 2 of the test's namespace, kthreadd).
TEST(MitigationExecutorTest, ASignalReachesTheProcessTheProcRootNamesNotTheAgentsNamesake) {
  // A pid namespace of its own, with its /proc: sh is its pid 1, sleep its pid 2.
  const pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    execl("/usr/bin/unshare", "unshare", "--pid", "--fork", "--mount-proc", "/bin/sh", "-c",
          "/bin/sleep 300 & wait; exit 0", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(child, 0);
  // unshare's own child (the namespace's pid 1) is the one whose root shows its /proc.
  std::string proc_root;
  for (int i = 0; i < 500 && proc_root.empty(); ++i) {
    std::string children;
    if (ReadProcFile(fmt::format("/proc/{}/task/{}/children", child, child), &children).ok() &&
        !children.empty()) {
      const std::string candidate = fmt::format("/proc/{}/root/proc", std::atoi(children.c_str()));
      // Pid 2 is sh's fork until it has exec'd sleep: wait for sleep.
      std::string comm;
      if (!InstanceIn(candidate, 2).empty() && ReadProcFile(candidate + "/2/comm", &comm).ok() &&
          comm.starts_with("sleep")) {
        proc_root = candidate;
      }
    }
    if (proc_root.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (proc_root.empty()) {
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    GTEST_SKIP() << "cannot make a pid namespace here (unshare needs root)";
  }
  MitigationExecutorOptions options = Allowing({"signal-process"});
  options.proc_root = proc_root;
  MitigationExecutor executor(options);
  drip::v1::CommandResult r = executor.Execute(Signal(2, InstanceIn(proc_root, 2)));
  EXPECT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.detail(), "sent SIGTERM to pid 2 (sleep)");
  // The namespace's sleep died, so its sh ended, and with it unshare.
  int status = 0;
  pid_t waited = 0;
  for (int i = 0; i < 1000 && waited == 0; ++i) {
    waited = waitpid(child, &status, WNOHANG);
    if (waited == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (waited == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
  }
  EXPECT_EQ(waited, child) << "the namespace's sleep was not signalled";
}

TEST(MitigationExecutorTest, SignalOutsideTheAllowListIsRejected) {
  Victim victim;
  MitigationExecutor executor(Allowing({"signal-process"}));
  for (int signal : {SIGSTOP, SIGSEGV, SIGRTMIN, 1000, -1}) {
    drip::v1::CommandResult r = executor.Execute(Signal(victim.pid(), victim.Instance(), signal));
    EXPECT_FALSE(r.ok()) << signal;
    EXPECT_NE(r.error().find("is not one the agent sends (allowed: SIGTERM,"), std::string::npos)
        << r.error();
  }
  EXPECT_TRUE(victim.StillRuns());
}

TEST(MitigationExecutorTest, DisallowedActionIsRefusedWithRefusedSet) {
  Victim victim;
  MitigationExecutor executor(Allowing({}));
  drip::v1::CommandResult r = executor.Execute(Signal(victim.pid(), victim.Instance()));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.refused());
  EXPECT_EQ(r.error(),
            "action signal-process is not allowed by this agent's mitigation.allowed_actions "
            "(allowed: none)");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(victim.StillRuns());

  MitigationExecutor restart_only(Allowing({"restart-unit"}));
  r = restart_only.Execute(Signal(victim.pid(), victim.Instance()));
  EXPECT_TRUE(r.refused());
  EXPECT_NE(r.error().find("(allowed: restart-unit)"), std::string::npos) << r.error();
}

TEST(MitigationExecutorTest, DisallowedActionDryRunIsCarriedOutWithANote) {
  Victim victim;
  FakeRestarter restarter;
  MitigationExecutorOptions options;
  options.restarter = &restarter;
  MitigationExecutor executor(options);
  drip::v1::CommandResult r =
      executor.Execute(Signal(victim.pid(), victim.Instance(), SIGHUP, /*dry_run=*/true));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r.refused());
  EXPECT_EQ(r.detail(), fmt::format("would send SIGHUP to pid {} (drip-victim) (not allowed on "
                                    "this host: would be refused)",
                                    victim.pid()));
  EXPECT_TRUE(victim.StillRuns());

  r = executor.Execute(Restart("nginx.service", /*dry_run=*/true));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.detail(),
            "would restart nginx.service (ActiveState=active) (not allowed on this host: would "
            "be refused)");
  EXPECT_TRUE(restarter.restarted.empty());
}

TEST(MitigationExecutorTest, DryRunStillChecksTheInstance) {
  Victim victim;
  MitigationExecutor executor(Allowing({}));
  drip::v1::CommandResult r = executor.Execute(
      Signal(victim.pid(), fmt::format("{}@1000000000", victim.pid()), 0, /*dry_run=*/true));
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.refused());
  EXPECT_NE(r.error().find("is not instance"), std::string::npos) << r.error();
}

TEST(MitigationExecutorTest, RestartUnitDispatchesToTheRestarter) {
  FakeRestarter restarter;
  MitigationExecutorOptions options = Allowing({"restart-unit"});
  options.restarter = &restarter;
  MitigationExecutor executor(options);

  drip::v1::CommandResult r = executor.Execute(Restart("nginx.service", /*dry_run=*/true));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.detail(), "would restart nginx.service (ActiveState=active)");
  EXPECT_EQ(restarter.asked, std::vector<std::string>{"nginx.service"});
  EXPECT_TRUE(restarter.restarted.empty());

  r = executor.Execute(Restart("getty@tty1.service"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.command_id(), "m2");
  EXPECT_EQ(r.detail(),
            "restarting getty@tty1.service (systemd job /org/freedesktop/systemd1/job/77)");
  EXPECT_EQ(restarter.restarted, std::vector<std::string>{"getty@tty1.service"});
}

// A collector (or whoever holds its key) must not be able to start a unit through
// restart-unit: systemd's RestartUnit starts a stopped unit, so systemd-poweroff.service
// would power the host off. Only a running unit is restarted.
TEST(MitigationExecutorTest, RestartUnitNeverStartsAUnitThatIsNotRunning) {
  FakeRestarter restarter;
  MitigationExecutorOptions options = Allowing({"restart-unit"});
  options.restarter = &restarter;
  MitigationExecutor executor(options);
  for (const std::string state : {"inactive", "failed", "activating", "deactivating"}) {
    restarter.state = state;
    drip::v1::CommandResult r = executor.Execute(Restart("systemd-poweroff.service"));
    EXPECT_FALSE(r.ok()) << state;
    EXPECT_EQ(r.error(),
              "restart-unit systemd-poweroff.service: the unit is " + state +
                  ", not running; restart-unit restarts a running service and never starts one");
  }
  EXPECT_TRUE(restarter.restarted.empty());
}

TEST(MitigationExecutorTest, RestartUnitRejectsWhatIsNotAServiceName) {
  FakeRestarter restarter;
  MitigationExecutorOptions options = Allowing({"restart-unit"});
  options.restarter = &restarter;
  MitigationExecutor executor(options);
  const std::vector<std::string> bad = {"",
                                        "nginx",
                                        ".service",
                                        "sshd.socket",
                                        "../../etc/x.service",
                                        "a b.service",
                                        "*.service",
                                        "x.service; reboot",
                                        "nginx.service\n",
                                        std::string(300, 'a') + ".service"};
  for (const std::string& unit : bad) {
    drip::v1::CommandResult r = executor.Execute(Restart(unit));
    EXPECT_FALSE(r.ok()) << unit;
    EXPECT_NE(r.error().find("is not a systemd service name"), std::string::npos) << r.error();
  }
  EXPECT_TRUE(restarter.restarted.empty());
  EXPECT_TRUE(IsValidServiceName("systemd-journald.service"));
  EXPECT_TRUE(IsValidServiceName("user@1000.service"));
  EXPECT_TRUE(IsValidServiceName("a:b_c\\x2d.service"));
}

TEST(MitigationExecutorTest, RestartUnitFailurePassesSystemdsMessageOn) {
  FakeRestarter restarter;
  restarter.fail_with = absl::NotFoundError(
      "restart-unit nope.service: GetUnit failed: org.freedesktop.systemd1.NoSuchUnit: Unit "
      "nope.service not loaded.");
  MitigationExecutorOptions options = Allowing({"restart-unit"});
  options.restarter = &restarter;
  MitigationExecutor executor(options);
  drip::v1::CommandResult r = executor.Execute(Restart("nope.service", /*dry_run=*/true));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("NoSuchUnit"), std::string::npos) << r.error();
}

TEST(MitigationExecutorTest, RestartUnitWithoutARestarterFails) {
  MitigationExecutor executor(Allowing({"restart-unit"}));
  drip::v1::CommandResult r = executor.Execute(Restart("nginx.service"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("no connection to systemd"), std::string::npos) << r.error();
}

TEST(MitigationExecutorTest, RecommendDoesNothingAndSaysSo) {
  MitigationExecutor executor(Allowing({}));
  drip::v1::Command command;
  command.set_id("m3");
  command.mutable_mitigation()->set_action("recommend");
  drip::v1::CommandResult r = executor.Execute(command);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.detail(), "recommend only: nothing done on the host");
}

TEST(MitigationExecutorTest, UnknownActionIsRejectedNamingIt) {
  MitigationExecutor executor(Allowing({"restart-unit", "signal-process"}));
  drip::v1::Command command;
  command.set_id("m4");
  command.mutable_mitigation()->set_action("reboot-host");
  drip::v1::CommandResult r = executor.Execute(command);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.refused());
  EXPECT_NE(r.error().find("unknown mitigation action 'reboot-host'"), std::string::npos)
      << r.error();
}

double MitigationCount(prometheus::Registry& registry, const std::string& action,
                       const std::string& outcome) {
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != "drip_agent_mitigations_total") continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      std::map<std::string, std::string> labels;
      for (const auto& l : metric.label) labels[l.name] = l.value;
      if (labels["action"] == action && labels["outcome"] == outcome) return metric.counter.value;
    }
  }
  return 0;
}

TEST(MitigationExecutorTest, EveryOutcomeIsCounted) {
  auto metrics = AgentMetrics::Create("", "proc", "");
  ASSERT_TRUE(metrics.ok());
  FakeRestarter restarter;
  MitigationExecutorOptions options = Allowing({"restart-unit"});
  options.restarter = &restarter;
  options.metrics = metrics->get();
  MitigationExecutor executor(options);
  executor.Execute(Restart("a.service"));
  executor.Execute(Restart("a.service", /*dry_run=*/true));
  executor.Execute(Restart("bad name"));
  executor.Execute(Signal(12345, "12345@1"));  // not allowed
  drip::v1::Command odd;
  odd.mutable_mitigation()->set_action("x");
  executor.Execute(odd);
  prometheus::Registry& r = (*metrics)->registry();
  EXPECT_EQ(MitigationCount(r, "restart-unit", "succeeded"), 1);
  EXPECT_EQ(MitigationCount(r, "restart-unit", "dry-run"), 1);
  EXPECT_EQ(MitigationCount(r, "restart-unit", "failed"), 1);
  EXPECT_EQ(MitigationCount(r, "signal-process", "refused"), 1);
  EXPECT_EQ(MitigationCount(r, "unknown", "failed"), 1);
}

TEST(MitigationExecutorTest, SubmitAnswersFromTheWorkerThread) {
  FakeRestarter restarter;
  MitigationExecutorOptions options = Allowing({"restart-unit"});
  options.restarter = &restarter;
  MitigationExecutor executor(options);
  std::promise<std::pair<drip::v1::CommandResult, std::thread::id>> answered;
  executor.Submit(Restart("nginx.service"), [&](drip::v1::CommandResult result) {
    answered.set_value({std::move(result), std::this_thread::get_id()});
  });
  auto future = answered.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto [result, thread] = future.get();
  EXPECT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.command_id(), "m2");
  EXPECT_NE(thread, std::this_thread::get_id());
}

}  // namespace
}  // namespace drip::agent
