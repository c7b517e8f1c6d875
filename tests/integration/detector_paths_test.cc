// One library judges memory three ways: online, as agents stream to the collector; rebuilt
// from the store when the collector restarts; and offline, from a file (`dripctl analyze`).
// On the same data, with the default detector config, they must flag the same series and
// say the same about versions (docs/rollout.md) — otherwise a restart, or an operator
// replaying an export, would tell a different story than the page they were sent.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "drip/v1/agent.grpc.pb.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tests/integration/history_agent.h"
#include "tests/integration/local_drip.h"
#include "tests/synthetic/fleet_generator.h"

namespace drip::testing {
namespace {

using SeriesKey = std::pair<std::string, std::string>;  // (host, component)

constexpr int64_t kEpochSeconds = 15 * 60;  // the detector's default epoch

// The (host, component) pairs in a `suspects` array of dripctl's JSON.
std::set<SeriesKey> SuspectedSeries(const nlohmann::json& suspects) {
  std::set<SeriesKey> out;
  for (const auto& s : suspects) out.emplace(s["host"], s["component"]);
  return out;
}

absl::StatusOr<std::set<SeriesKey>> CollectorSuspects(LocalDrip& drip) {
  CommandOutput out = drip.Dripctl({"suspects", "--json"});
  if (out.exit_code != 0) {
    return absl::InternalError(
        fmt::format("dripctl suspects: exit {}: {}", out.exit_code, out.err));
  }
  const nlohmann::json listed = nlohmann::json::parse(out.out, nullptr, false);
  if (listed.is_discarded()) return absl::InternalError("dripctl suspects printed: " + out.out);
  return SuspectedSeries(listed["suspects"]);
}

// Each leak report's rollout verdict, by component, from `dripctl leaks list --json`.
absl::StatusOr<std::map<std::string, std::string>> ReportVerdicts(LocalDrip& drip) {
  CommandOutput out = drip.Dripctl({"leaks", "list", "--json"});
  if (out.exit_code != 0) {
    return absl::InternalError(
        fmt::format("dripctl leaks list: exit {}: {}", out.exit_code, out.err));
  }
  const nlohmann::json listed = nlohmann::json::parse(out.out, nullptr, false);
  if (listed.is_discarded()) return absl::InternalError("dripctl leaks list printed: " + out.out);
  std::map<std::string, std::string> verdicts;
  for (const auto& r : listed["reports"]) verdicts[r["component"]] = r["rollout"]["verdict"];
  return verdicts;
}

std::string Describe(const std::map<std::string, std::string>& verdicts) {
  std::string text;
  for (const auto& [component, verdict] : verdicts)
    text += fmt::format("\n  {} {}", component, verdict);
  return text.empty() ? " (none)" : text;
}

std::string Describe(const std::set<SeriesKey>& series) {
  std::string text;
  for (const auto& [host, component] : series) text += fmt::format("\n  {} {}", host, component);
  return text.empty() ? " (none)" : text;
}

TEST(DetectorPathsTest, OnlineRebuiltAndOfflineJudgementsFlagTheSameSeries) {
  // A small fleet of the hard profile (every hazard and every kind of leak), four days
  // at five minutes, shifted to end a minute ago, whole epochs apart.
  synthetic::FleetSpec spec = synthetic::FleetGenerator::HardTestSuite(21);
  spec.hosts = 8;
  spec.duration_s = 4 * 86400;
  synthetic::FleetGenerator fleet(spec);
  const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  const int64_t end_s = now_s - 60;
  int64_t shift_s = end_s - (spec.start_s + spec.duration_s);
  shift_s -= ((shift_s % kEpochSeconds) + kEpochSeconds) % kEpochSeconds;

  LocalDrip drip;
  // Replays the whole history at start (the default keeps three days).
  ASSERT_TRUE(drip.StartCollector("detector:\n  rebuild_window: 120h\n").ok()) << drip.Logs();

  std::map<std::string, std::vector<size_t>> series_of_host;
  for (size_t i = 0; i < fleet.series().size(); ++i) {
    series_of_host[fleet.series()[i].host].push_back(i);
  }
  auto channel = grpc::CreateChannel(drip.grpc_address(), grpc::InsecureChannelCredentials());
  auto stub = drip::v1::AgentService::NewStub(channel);
  std::map<std::string, std::unique_ptr<HistoryAgent>> agents;
  for (const auto& [host, unused] : series_of_host) {
    agents[host] = std::make_unique<HistoryAgent>(stub.get(), host);
    ASSERT_TRUE(agents[host]->welcomed()) << host << drip.Logs();
  }

  // Online: every host sends each epoch's samples as it would live, host after host, and
  // the same rows go to the file dripctl analyze reads.
  // What each instance runs goes with its first sample, as an agent sends it.
  const std::string csv = drip.dir().File("fleet.csv");
  std::ofstream file(csv);
  file << "timestamp,host,component,instance,bytes,version\n";
  synthetic::SyntheticSample sample;
  size_t rows = 0;
  std::set<std::pair<size_t, std::string>> announced;  // (series, instance)
  const int64_t first_epoch =
      spec.start_s - ((spec.start_s % kEpochSeconds) + kEpochSeconds) % kEpochSeconds;
  for (int64_t epoch = first_epoch; epoch < spec.start_s + spec.duration_s;
       epoch += kEpochSeconds) {
    for (const auto& [host, indices] : series_of_host) {
      drip::v1::SampleBatch batch;
      for (const size_t i : indices) {
        const std::string& component = fleet.series()[i].component;
        for (int64_t t = std::max(epoch, spec.start_s); t < epoch + kEpochSeconds;
             t += spec.interval_s) {
          if (!fleet.SampleAt(i, t, &sample)) continue;
          const int64_t at = sample.timestamp_s + shift_s;
          drip::v1::Sample* s = batch.add_samples();
          s->set_component(component);
          s->set_instance(std::string(sample.instance));
          s->set_timestamp_ms(at * 1000);
          s->mutable_process()->set_anon_rss_bytes(sample.bytes);
          std::string version;
          for (const auto& [since, v] : synthetic::FleetGenerator::Versions(fleet.series()[i])) {
            if (since <= t) version = v;
          }
          if (announced.emplace(i, std::string(sample.instance)).second) {
            drip::v1::InstanceVersion* announce = batch.add_versions();
            announce->set_component(component);
            announce->set_instance(std::string(sample.instance));
            announce->set_label(version);
            announce->set_first_seen_ms(at * 1000);
          }
          file << at << ',' << host << ',' << component << ',' << sample.instance << ','
               << sample.bytes << ',' << version << '\n';
          ++rows;
        }
      }
      if (batch.samples_size() > 0) {
        ASSERT_TRUE(agents[host]->SendAcked(std::move(batch))) << host << drip.Logs();
      }
    }
  }
  file.close();
  for (auto& [host, agent] : agents) EXPECT_TRUE(agent->Close().ok()) << host;
  agents.clear();

  CommandOutput analyzed =
      RunCommand({DripctlBinary(), "analyze", "--input", csv}, std::chrono::seconds(120));
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
  const nlohmann::json report = nlohmann::json::parse(analyzed.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << analyzed.out;
  EXPECT_EQ(report["summary"]["rows"], rows);
  const std::set<SeriesKey> offline = SuspectedSeries(report["suspects"]);
  std::map<std::string, std::string> offline_verdicts;
  for (const auto& c : report["components"])
    offline_verdicts[c["component"]] = c["rollout"]["verdict"];

  // The pipeline judges quiet series every few seconds: give it two rounds, and more while
  // its view still differs (a sanitized collector on a loaded machine is slower; a CI run
  // caught it mid-round). What it settles on must be the offline judgement.
  std::this_thread::sleep_for(std::chrono::seconds(12));
  absl::StatusOr<std::set<SeriesKey>> online = CollectorSuspects(drip);
  for (int round = 0; round < 30 && online.ok() && *online != offline; ++round) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    online = CollectorSuspects(drip);
  }
  ASSERT_TRUE(online.ok()) << online.status() << drip.Logs();
  absl::StatusOr<std::map<std::string, std::string>> online_verdicts = ReportVerdicts(drip);
  ASSERT_TRUE(online_verdicts.ok()) << online_verdicts.status() << drip.Logs();

  drip.KillCollector(SIGTERM);
  ASSERT_TRUE(drip.StartCollector("detector:\n  rebuild_window: 120h\n").ok()) << drip.Logs();
  absl::StatusOr<std::set<SeriesKey>> rebuilt = CollectorSuspects(drip);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status() << drip.Logs();
  // The restarted collector has judged once already (at start), with the versions it
  // read back from the store.
  absl::StatusOr<std::map<std::string, std::string>> rebuilt_verdicts = ReportVerdicts(drip);
  ASSERT_TRUE(rebuilt_verdicts.ok()) << rebuilt_verdicts.status() << drip.Logs();

  // The fleet has leaks, so the comparison is not of three empty sets.
  size_t leaking_flagged = 0;
  for (const auto& s : fleet.series())
    leaking_flagged += s.leaking && offline.count({s.host, s.component});
  EXPECT_GT(leaking_flagged, 5u) << "offline flagged" << Describe(offline);
  EXPECT_EQ(*online, offline) << "online:" << Describe(*online)
                              << "\noffline:" << Describe(offline);
  EXPECT_EQ(*rebuilt, offline) << "rebuilt:" << Describe(*rebuilt)
                               << "\noffline:" << Describe(offline);

  // The versions: a rollout's leak is told apart, and the three paths say the same.
  bool rollout_leak_flagged = false;
  for (const auto& s : fleet.series()) {
    rollout_leak_flagged |= s.leaking && offline.count({s.host, s.component}) &&
                            (s.behaviour == synthetic::Behaviour::kRolloutLeak ||
                             s.behaviour == synthetic::Behaviour::kRolloutThatLeaks);
  }
  ASSERT_TRUE(rollout_leak_flagged) << "offline flagged" << Describe(offline);
  size_t arrived = 0;
  for (const auto& [component, verdict] : offline_verdicts)
    arrived += verdict == "arrived-with-version";
  EXPECT_GT(arrived, 0u) << "offline:" << Describe(offline_verdicts);
  // A report opens only for a host still leaking in the last hour (the detector keeps a
  // stopped suspect's figures); each report's verdict is the offline one.
  for (const auto* paths : {&*online_verdicts, &*rebuilt_verdicts}) {
    for (const auto& [component, verdict] : *paths) {
      EXPECT_EQ(verdict, offline_verdicts[component])
          << component << (paths == &*online_verdicts ? " online" : " rebuilt");
    }
  }
  size_t arrived_online = 0;
  for (const auto& [component, verdict] : *online_verdicts) {
    arrived_online += verdict == "arrived-with-version";
  }
  EXPECT_GT(arrived_online, 0u) << "online:" << Describe(*online_verdicts);
  EXPECT_GE(rebuilt_verdicts->size(), online_verdicts->size())
      << "rebuilt:" << Describe(*rebuilt_verdicts);
}

}  // namespace
}  // namespace drip::testing
