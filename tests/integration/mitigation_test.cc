// Mitigation end to end on real parts: a leaking child process is suspected by the real
// collector, whose policy for the child's component acts on its own; the command goes
// down the real agent stream, the agent (allowed by its own config) signals the child,
// and the outcome reaches the leak report and the audit log that dripctl shows. A
// dry-run policy, in contrast, leaves the child running and the report open.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "fmt/format.h"
#include "tests/integration/local_drip.h"

namespace drip::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A component-specific policy: the agent watches the whole host, and no other process
// on it may be touched by the test.
std::string PolicyFor(const std::string& component, bool dry_run) {
  return fmt::format(R"(snapshots:
  enabled: false
mitigation:
  components:
    - component: "{}"
      mode: automatic
      action: signal-process
      signal: SIGTERM
      dry_run: {}
      trigger_eta: 100000h
      max_host_fraction: 1
      cooldown: 1h
  result_timeout: 20s
)",
                     component, dry_run ? "true" : "false");
}

constexpr const char* kAgentAllowsSignals = R"(mitigation:
  allowed_actions: [signal-process]
)";

struct LeakingChild {
  std::unique_ptr<ChildProcess> process;
  std::string component;
};

absl::StatusOr<LeakingChild> StartLeakingChild(LocalDrip& drip) {
  auto child =
      ChildProcess::Start({LeakyExampleBinary(), "--leak-kib-per-s", "4096", "--seconds", "300"},
                          drip.dir().File("leaky.log"));
  if (!child.ok()) return child.status();
  std::this_thread::sleep_for(milliseconds(500));
  auto component = ComponentOfPid((*child)->pid());
  if (!component.ok()) return component.status();
  return LeakingChild{std::move(*child), *component};
}

// Polls `dripctl audit --json` until an entry matches, or returns null after `timeout`.
nlohmann::json WaitForAudit(LocalDrip& drip, const std::string& action, const std::string& outcome,
                            seconds timeout, std::string* last) {
  for (auto deadline = std::chrono::steady_clock::now() + timeout;
       std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(seconds(1))) {
    CommandOutput out = drip.Dripctl({"audit", "--json"});
    if (out.exit_code != 0) {
      *last = out.err;
      continue;
    }
    *last = out.out;
    const nlohmann::json parsed = nlohmann::json::parse(out.out);
    for (const auto& e : parsed["entries"]) {
      if (e["action"] == action && e["outcome"] == outcome) return e;
    }
  }
  return nullptr;
}

nlohmann::json ShowReport(LocalDrip& drip, const std::string& id) {
  CommandOutput out = drip.Dripctl({"leaks", "show", id, "--json"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  return out.exit_code == 0 ? nlohmann::json::parse(out.out) : nlohmann::json();
}

TEST(MitigationTest, AnAutomaticPolicySignalsTheLeakingChildAndTheReportAndAuditShowIt) {
  LocalDrip drip;
  auto child = StartLeakingChild(drip);
  ASSERT_TRUE(child.ok()) << child.status();
  ASSERT_TRUE(
      drip.StartCollector(std::string(kFastDetectorYaml) + PolicyFor(child->component, false)).ok())
      << drip.Logs();
  const std::string host = fmt::format("it-mitigate-{}", getpid());
  ASSERT_TRUE(drip.StartAgent(host, milliseconds(1000), {}, kAgentAllowsSignals).ok())
      << drip.Logs();

  std::string last;
  nlohmann::json done = WaitForAudit(drip, "signal-process", "succeeded", seconds(150), &last);
  ASSERT_FALSE(done.is_null()) << "no successful signal-process in the audit log:\n"
                               << last << drip.Logs();
  EXPECT_EQ(done["host"], host);
  EXPECT_EQ(done["actor"], "policy");
  EXPECT_FALSE(done["dry_run"].get<bool>());
  EXPECT_NE(done["detail"].get<std::string>().find("SIGTERM"), std::string::npos) << done.dump();

  // The child really got SIGTERM.
  std::optional<int> status = child->process->Wait(seconds(10));
  ASSERT_TRUE(status.has_value()) << "the leaking child is still running";
  ASSERT_TRUE(WIFSIGNALED(*status)) << *status;
  EXPECT_EQ(WTERMSIG(*status), SIGTERM);

  const nlohmann::json report = ShowReport(drip, done["report_id"].get<std::string>());
  EXPECT_EQ(report["state"], "mitigated") << report.dump(2);
  ASSERT_FALSE(report["mitigations"].empty()) << report.dump(2);
  EXPECT_EQ(report["mitigations"][0]["outcome"], "succeeded") << report.dump(2);
  EXPECT_EQ(report["component"], child->component);
}

TEST(MitigationTest, ADryRunPolicyLeavesTheChildRunningAndTheReportOpen) {
  LocalDrip drip;
  auto child = StartLeakingChild(drip);
  ASSERT_TRUE(child.ok()) << child.status();
  ASSERT_TRUE(
      drip.StartCollector(std::string(kFastDetectorYaml) + PolicyFor(child->component, true)).ok())
      << drip.Logs();
  const std::string host = fmt::format("it-dryrun-{}", getpid());
  ASSERT_TRUE(drip.StartAgent(host, milliseconds(1000), {}, kAgentAllowsSignals).ok())
      << drip.Logs();

  std::string last;
  nlohmann::json dry = WaitForAudit(drip, "signal-process", "dry-run", seconds(150), &last);
  ASSERT_FALSE(dry.is_null()) << "no dry-run in the audit log:\n" << last << drip.Logs();
  EXPECT_TRUE(dry["dry_run"].get<bool>());
  EXPECT_NE(dry["detail"].get<std::string>().find("would send SIGTERM"), std::string::npos)
      << dry.dump();
  std::this_thread::sleep_for(seconds(2));
  EXPECT_TRUE(child->process->Running()) << "a dry-run must not signal the child";
  const std::string id = dry["report_id"];
  nlohmann::json report = ShowReport(drip, id);
  EXPECT_EQ(report["state"], "open") << report.dump(2);

  // On-call previews by hand, acknowledges, then resolves; each step is audited.
  CommandOutput preview = drip.Dripctl(
      {"mitigate", id, "--action", "signal-process", "--dry-run", "--host", host, "--json"});
  EXPECT_EQ(preview.exit_code, 0) << preview.out << preview.err;
  EXPECT_NE(preview.out.find("dry-run"), std::string::npos) << preview.out;
  EXPECT_TRUE(child->process->Running());
  CommandOutput ack = drip.Dripctl({"leaks", "ack", id, "--note", "looking"});
  EXPECT_EQ(ack.exit_code, 0) << ack.err;
  EXPECT_EQ(ShowReport(drip, id)["state"], "acknowledged");
  CommandOutput resolve = drip.Dripctl({"leaks", "resolve", id});
  EXPECT_EQ(resolve.exit_code, 0) << resolve.err;
  EXPECT_EQ(ShowReport(drip, id)["state"], "resolved");
  EXPECT_FALSE(WaitForAudit(drip, "ack", "done", seconds(5), &last).is_null()) << last;
  EXPECT_FALSE(WaitForAudit(drip, "resolve", "done", seconds(5), &last).is_null()) << last;
  // Resolving again is refused with the documented exit code for a bad request.
  CommandOutput again = drip.Dripctl({"leaks", "ack", id});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("resolved"), std::string::npos) << again.err;
}

}  // namespace
}  // namespace drip::testing
