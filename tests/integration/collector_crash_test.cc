// kill -9 of the collector mid-stream: what it acknowledged survives, the agent
// reconnects and resends by itself, and the stored series ends up with neither gaps
// nor duplicates. Once with the real drip-agent, once with several agents (the real
// agent stream and buffer, fed synthetic samples so that the test knows every
// acknowledgement) and twenty kills at random points.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "fmt/format.h"
#include "tests/integration/local_drip.h"
#include "tests/integration/synthetic_agent.h"

namespace drip::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(CollectorCrashTest, KillNineLosesNoStoredSampleAndResendLeavesNoGapOrDuplicate) {
  constexpr auto kInterval = milliseconds(500);
  LocalDrip drip;
  ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  std::string host = fmt::format("it-crash-{}", getpid());
  ASSERT_TRUE(drip.StartAgent(host, kInterval).ok()) << drip.Logs();
  auto child = ChildProcess::Start({TestAllocBinary(), "8"}, drip.dir().File("alloc.log"));
  ASSERT_TRUE(child.ok());
  std::this_thread::sleep_for(milliseconds(300));
  auto component = ComponentOfPid((*child)->pid());
  ASSERT_TRUE(component.ok()) << component.status();
  std::string prefix = fmt::format("{}@", (*child)->pid());

  std::set<int64_t> stored_before_kills;
  for (int round = 0; round < 2; ++round) {
    std::this_thread::sleep_for(seconds(3));
    auto before = drip.Series(host, *component);
    ASSERT_TRUE(before.ok()) << before.status() << drip.Logs();
    for (int64_t ts : SampleTimestamps(*before, prefix)) stored_before_kills.insert(ts);
    ASSERT_FALSE(stored_before_kills.empty()) << drip.Logs();

    drip.KillCollector(SIGKILL);
    // Down for several intervals: the agent buffers what it samples meanwhile.
    std::this_thread::sleep_for(seconds(2));
    ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  }
  // Let the agent reconnect, resend its backlog and stream a little more.
  std::this_thread::sleep_for(seconds(4));
  auto after = drip.Series(host, *component);
  ASSERT_TRUE(after.ok()) << after.status() << drip.Logs();
  std::vector<int64_t> timestamps = SampleTimestamps(*after, prefix);
  ASSERT_GT(timestamps.size(), stored_before_kills.size());

  std::set<int64_t> unique(timestamps.begin(), timestamps.end());
  EXPECT_EQ(unique.size(), timestamps.size()) << "a sample was stored twice";
  for (int64_t ts : stored_before_kills) {
    EXPECT_TRUE(unique.contains(ts))
        << "sample at " << ts << " was stored before a kill and is gone";
  }
  for (size_t i = 1; i < timestamps.size(); ++i) {
    EXPECT_GT(timestamps[i], timestamps[i - 1]);
    // Consecutive passes are one interval apart; a missing pass would leave two.
    EXPECT_LT(timestamps[i] - timestamps[i - 1], 2 * kInterval.count())
        << "gap between samples " << i - 1 << " and " << i << "\n"
        << drip.Logs();
  }
}

std::vector<int64_t> StoredTimestamps(LocalDrip& drip, const std::string& host,
                                      const std::string& component) {
  auto series = drip.Series(host, component);
  EXPECT_TRUE(series.ok()) << series.status();
  if (!series.ok()) return {};
  return SampleTimestamps(*series, "");
}

// The open report of `component`, or null.
nlohmann::json OpenReport(LocalDrip& drip, const std::string& component) {
  CommandOutput out = drip.Dripctl({"leaks", "list", "--json"});
  if (out.exit_code != 0) return nullptr;
  const nlohmann::json listed = nlohmann::json::parse(out.out, nullptr, false);
  if (listed.is_discarded()) return nullptr;
  for (const auto& r : listed["reports"]) {
    if (r["component"] == component) return r;
  }
  return nullptr;
}

// Whether `host`'s `component` is a suspect; nullopt when dripctl failed (`why` says how:
// under ASan a freshly restarted collector can be slow to answer).
std::optional<bool> IsSuspected(LocalDrip& drip, const std::string& host,
                                const std::string& component, std::string* why) {
  CommandOutput out = drip.Dripctl({"suspects", "--json"});
  if (out.exit_code != 0) {
    *why = fmt::format("dripctl suspects exited {}: {}", out.exit_code, out.err);
    return std::nullopt;
  }
  const nlohmann::json listed = nlohmann::json::parse(out.out, nullptr, false);
  if (listed.is_discarded()) {
    *why = "dripctl suspects --json printed no JSON: " + out.out;
    return std::nullopt;
  }
  for (const auto& s : listed["suspects"]) {
    if (s["host"] == host && s["component"] == component) return true;
  }
  *why = "suspects: " + listed.dump();
  return false;
}

// The suspect is there after a restart. The detector is rebuilt from the store before the
// collector serves, so it should be at once; a query that fails is asked again, and the
// suspect may take until the agents' resent batches are in (a few seconds) — counted, so
// a rebuilt detector that forgets suspects shows in the log.
bool SuspectSurvives(LocalDrip& drip, const std::string& host, const std::string& component,
                     std::string* why) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (std::optional<bool> suspected = IsSuspected(drip, host, component, why);
        suspected.value_or(false)) {
      if (attempt > 0) std::fprintf(stderr, "suspect back after %d more queries\n", attempt);
      return true;
    }
    std::this_thread::sleep_for(milliseconds(500));
  }
  return false;
}

TEST(CollectorCrashTest, TwentyKillsUnderLoadFromSeveralAgentsLoseNoAckedSampleNorStoreOneTwice) {
  constexpr int kAgents = 4;
  constexpr int kKills = 20;
  const std::string leaker = "proc:crash-leaker";
  LocalDrip drip;
  ASSERT_TRUE(
      drip.StartCollector(std::string(kFastDetectorYaml) + "snapshots:\n  enabled: false\n").ok())
      << drip.Logs();
  std::vector<std::unique_ptr<SyntheticAgent>> agents;
  for (int i = 0; i < kAgents; ++i) {
    agents.push_back(std::make_unique<SyntheticAgent>(fmt::format("crash-{}-{}", getpid(), i),
                                                      drip.grpc_address(), /*leaking=*/i == 0));
  }
  const std::string leaking_host = agents[0]->host();

  // A leak report to carry through the kills.
  nlohmann::json report;
  for (int i = 0; i < 240 && report.is_null(); ++i) {
    std::this_thread::sleep_for(seconds(1));
    report = OpenReport(drip, leaker);
  }
  ASSERT_FALSE(report.is_null()) << "no leak report for " << leaker << "\n" << drip.Logs();
  const std::string report_id = report["id"];

  const unsigned seed = std::random_device{}();
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> pause_ms(200, 2000);
  SCOPED_TRACE(fmt::format("kill points drawn with seed {}", seed));
  for (int kill = 0; kill < kKills; ++kill) {
    std::this_thread::sleep_for(milliseconds(pause_ms(random)));
    drip.KillCollector(SIGKILL);
    std::this_thread::sleep_for(milliseconds(pause_ms(random) / 4));
    ASSERT_TRUE(
        drip.StartCollector(std::string(kFastDetectorYaml) + "snapshots:\n  enabled: false\n").ok())
        << "restart " << kill << "\n"
        << drip.Logs();
    // The rebuilt detector and the stored reports are back before the collector serves.
    nlohmann::json again = OpenReport(drip, leaker);
    ASSERT_FALSE(again.is_null()) << "report gone after kill " << kill << "\n" << drip.Logs();
    EXPECT_EQ(again["id"], report_id) << "a new report after kill " << kill;
    EXPECT_EQ(again["first_seen_s"], report["first_seen_s"]);
    std::string why;
    EXPECT_TRUE(SuspectSurvives(drip, leaking_host, leaker, &why))
        << "suspect lost after kill " << kill << ": " << why;
  }

  // Drain: no new data, every buffered batch resent and acknowledged.
  for (auto& a : agents) a->StopFeeding();
  for (int i = 0; i < 300; ++i) {
    bool drained = true;
    for (auto& a : agents) drained = drained && a->Buffered() == 0;
    if (drained) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  for (auto& a : agents) {
    ASSERT_EQ(a->Buffered(), 0u) << a->host() << " still holds unacknowledged batches";
    const std::vector<int64_t> acked = a->TimestampsUpTo(a->AckedSequence());
    ASSERT_GT(acked.size(), 100u);
    std::vector<int64_t> stored = StoredTimestamps(drip, a->host(), "proc:crash-steady");
    const std::set<int64_t> unique(stored.begin(), stored.end());
    EXPECT_EQ(unique.size(), stored.size()) << a->host() << ": a sample was stored twice";
    size_t missing = 0;
    for (int64_t ts : acked) missing += unique.contains(ts) ? 0 : 1;
    EXPECT_EQ(missing, 0u) << a->host() << ": " << missing << " of " << acked.size()
                           << " acknowledged samples are not stored";
    EXPECT_EQ(stored.size(), acked.size()) << a->host();
  }
  CommandOutput hosts = drip.Dripctl({"hosts", "--json"});
  ASSERT_EQ(hosts.exit_code, 0);
  const nlohmann::json listed_hosts = nlohmann::json::parse(hosts.out);
  for (const auto& h : listed_hosts["hosts"]) {
    EXPECT_EQ(h["gaps"], 0) << h.dump();
  }
  nlohmann::json final_report = OpenReport(drip, leaker);
  ASSERT_FALSE(final_report.is_null());
  EXPECT_EQ(final_report["id"], report_id);
  EXPECT_EQ(final_report["state"], "open");
  for (auto& a : agents) a->Stop();
}

}  // namespace
}  // namespace drip::testing
