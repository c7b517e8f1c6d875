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

#include "agent/batch_buffer.h"
#include "agent/collector_stream.h"
#include "fmt/format.h"
#include "tests/integration/local_drip.h"

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

// One host's agent as the test drives it: the agent's own BatchBuffer and CollectorStream,
// fed a batch every `period` of two samples (a flat component and, on a leaking host, one
// growing 4 MiB/s). Every batch's timestamp is kept, so that what was acknowledged can be
// checked against what the collector stores.
class SyntheticAgent {
 public:
  SyntheticAgent(std::string host, std::string address, bool leaking)
      : host_(std::move(host)),
        leaking_(leaking),
        buffer_(agent::BatchBufferOptions{.max_batches = 1'000'000, .max_bytes = 1ull << 32}) {
    agent::CollectorStreamOptions options;
    options.address = std::move(address);
    options.tls.plaintext = true;
    options.backoff_initial = milliseconds(50);
    options.backoff_max = milliseconds(400);
    drip::v1::Hello hello;
    hello.set_host(host_);
    hello.set_agent_version("crash-test");
    hello.set_memory_total_bytes(16ull << 30);
    stream_ = std::make_unique<agent::CollectorStream>(options, hello, &buffer_, [] {
      drip::v1::AgentStatus status;
      status.set_sampler("synthetic");
      return status;
    });
    stream_->Start();
    feeder_ = std::thread([this] { Feed(); });
  }

  ~SyntheticAgent() { Stop(); }

  void StopFeeding() {
    stop_feeding_ = true;
    if (feeder_.joinable()) feeder_.join();
  }

  void Stop() {
    StopFeeding();
    stream_->Stop();
  }

  // Every batch up to this sequence was acknowledged (the buffer holds a contiguous,
  // never-dropped suffix of what was pushed).
  uint64_t AckedSequence() const {
    agent::BatchBuffer::Stats s = buffer_.stats();
    return s.next_sequence - 1 - s.buffered_batches;
  }
  uint64_t Buffered() const { return buffer_.stats().buffered_batches; }

  // Timestamps of the batches up to `sequence`.
  std::vector<int64_t> TimestampsUpTo(uint64_t sequence) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<int64_t> out;
    for (const auto& [seq, ts] : timestamps_) {
      if (seq <= sequence) out.push_back(ts);
    }
    return out;
  }

  const std::string& host() const { return host_; }

 private:
  void Feed() {
    constexpr auto kPeriod = milliseconds(100);
    uint64_t n = 0;
    while (!stop_feeding_) {
      const int64_t now = std::chrono::duration_cast<milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
      drip::v1::SampleBatch batch;
      auto* flat = batch.add_samples();
      flat->set_component("proc:crash-steady");
      flat->set_instance("100@1");
      flat->set_timestamp_ms(now);
      flat->mutable_process()->set_anon_rss_bytes(100ull << 20);
      if (leaking_) {
        auto* leak = batch.add_samples();
        leak->set_component("proc:crash-leaker");
        leak->set_instance("200@1");
        leak->set_timestamp_ms(now);
        leak->mutable_process()->set_anon_rss_bytes((50ull << 20) + n * (400ull << 10));
      }
      {
        // Under the lock so that a batch is never acknowledged before it is recorded.
        std::lock_guard<std::mutex> lock(mu_);
        const uint64_t sequence = buffer_.Push(std::move(batch));
        timestamps_[sequence] = now;
      }
      ++n;
      std::this_thread::sleep_for(kPeriod);
    }
  }

  const std::string host_;
  const bool leaking_;
  agent::BatchBuffer buffer_;
  std::unique_ptr<agent::CollectorStream> stream_;
  mutable std::mutex mu_;
  std::map<uint64_t, int64_t> timestamps_;
  std::atomic<bool> stop_feeding_{false};
  std::thread feeder_;
};

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
