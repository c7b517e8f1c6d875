// The whole path on real parts: a child process allocates 200 MiB, the real agent
// samples it, streams it over loopback gRPC to the real collector, which stores it in
// RocksDB, and dripctl reads it back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <thread>

#include "fmt/format.h"
#include "tests/integration/local_drip.h"
#include "tests/support/go_pprof.h"

namespace drip::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(PipelineTest, ChildAllocating200MiBShowsUpInDripctlSeriesWithinFivePercent) {
  LocalDrip drip;
  ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  std::string host = fmt::format("it-pipeline-{}", getpid());
  ASSERT_TRUE(drip.StartAgent(host, milliseconds(1000)).ok()) << drip.Logs();

  auto child = ChildProcess::Start({TestAllocBinary(), "200"}, drip.dir().File("alloc.log"));
  ASSERT_TRUE(child.ok());
  // Wait until the child has touched all of its memory.
  for (int i = 0; i < 200 && (*child)->Log().find("ready") == std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  auto component = ComponentOfPid((*child)->pid());
  ASSERT_TRUE(component.ok()) << component.status();

  const double expected = 200.0 * 1024 * 1024;
  std::string instance_prefix = fmt::format("{}@", (*child)->pid());
  double seen = 0;
  // "Within a few intervals": the agent samples every second.
  for (int attempt = 0; attempt < 10 && seen < expected * 0.95; ++attempt) {
    std::this_thread::sleep_for(seconds(1));
    auto series = drip.Series(host, *component);
    ASSERT_TRUE(series.ok()) << series.status() << drip.Logs();
    for (const auto& s : (*series)["series"]) {
      if (s["instance"].get<std::string>().rfind(instance_prefix, 0) != 0) continue;
      ASSERT_FALSE(s["samples"].empty());
      seen = s["samples"].back()["anon_rss_bytes"].get<double>();
    }
  }
  EXPECT_NEAR(seen, expected, expected * 0.05) << drip.Logs();

  // The host is listed with its agent's labels and as connected.
  CommandOutput hosts = drip.Dripctl({"hosts", "--json"});
  ASSERT_EQ(hosts.exit_code, 0) << hosts.err;
  auto listed = nlohmann::json::parse(hosts.out);
  bool found = false;
  for (const auto& h : listed["hosts"]) {
    if (h["host"] != host) continue;
    found = true;
    EXPECT_TRUE(h["connected"].get<bool>());
    EXPECT_EQ(h["labels"]["env"], "integration-test");
    EXPECT_FALSE(h["agent_version"].get<std::string>().empty());
  }
  EXPECT_TRUE(found) << hosts.out;
}

TEST(PipelineTest, LeakingChildBecomesASuspectWhoseHeapSnapshotNamesTheLeakingFunction) {
  LocalDrip drip;
  // A second snapshot of the same process 20 s after the first, so that the report keeps
  // two and its diff can be read (the default cool-down is an hour).
  ASSERT_TRUE(
      drip.StartCollector(std::string(kFastDetectorYaml) + kFastSnapshotsYaml + "  cooldown: 20s\n")
          .ok())
      << drip.Logs();
  std::string host = fmt::format("it-suspect-{}", getpid());
  // Only the example may be snapshotted (one at a time): a sanitized collector grows too.
  const std::string example =
      "proc:" + std::filesystem::path(LeakyExampleBinary()).filename().string();
  drip.SetAgentAllowedComponents({example});
  ASSERT_TRUE(drip.StartAgent(host, milliseconds(1000)).ok()) << drip.Logs();
  // ~4 MiB/s: far above the 25 % a young series must rise within 40 s. The version its
  // environment declares reaches the report (env execs it: same pid).
  auto child = ChildProcess::Start({"/usr/bin/env", "DRIP_VERSION=2.4.1-it", LeakyExampleBinary(),
                                    "--leak-kib-per-s", "4096", "--seconds", "300"},
                                   drip.dir().File("leaky.log"));
  ASSERT_TRUE(child.ok());
  std::this_thread::sleep_for(milliseconds(500));
  auto component = ComponentOfPid((*child)->pid());
  ASSERT_TRUE(component.ok()) << component.status();
  ASSERT_EQ(*component, example);

  std::string last;
  const nlohmann::json suspect = WaitForSuspect(drip, host, *component, seconds(120), &last);
  ASSERT_FALSE(suspect.is_null()) << "no suspect for " << *component << " in\n"
                                  << last << drip.Logs();
  EXPECT_EQ(suspect["instance"].get<std::string>().rfind(fmt::format("{}@", (*child)->pid()), 0),
            0u)
      << suspect.dump();
  EXPECT_GT(suspect["growth_bytes_per_hour"].get<double>(), 1.0 * (1 << 30)) << suspect.dump();
  EXPECT_FALSE(suspect["reason"].get<std::string>().empty());

  // The collector then has the agent snapshot the suspect's heap (attach mode: the
  // example has no shim) and attaches the diagnosis: the leaking function, found live.
  const nlohmann::json snapshot =
      WaitForFinishedSnapshot(drip, host, *component, seconds(90), &last);
  ASSERT_FALSE(snapshot.is_null()) << "no finished snapshot in\n" << last << drip.Logs();
  ASSERT_EQ(snapshot["state"], "done") << snapshot.dump(2) << drip.Logs();
  const nlohmann::json& stacks = snapshot["diagnosis"]["stacks"];
  ASSERT_FALSE(stacks.empty()) << snapshot.dump(2);
  EXPECT_EQ(stacks[0]["verdict"], "leak") << snapshot.dump(2);
  ASSERT_FALSE(stacks[0]["frames"].empty()) << snapshot.dump(2);
  EXPECT_NE(stacks[0]["frames"][0]["function"].get<std::string>().find("RememberSession"),
            std::string::npos)
      << snapshot.dump(2);

  // The table form names the component and the leaking function too.
  CommandOutput table = drip.Dripctl({"suspects"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find(*component), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("RememberSession"), std::string::npos) << table.out;

  // The leak is one report, which carries the diagnosis once the next detector pass
  // has folded it in, and `dripctl leaks show` names the leaking function with its line.
  std::string id;
  nlohmann::json report;
  for (int attempt = 0; attempt < 30; ++attempt) {
    CommandOutput list = drip.Dripctl({"leaks", "list", "--json"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    last = list.out;
    const nlohmann::json listed = nlohmann::json::parse(list.out);
    for (const auto& r : listed["reports"]) {
      if (r["component"] == *component && !r["top_stacks"].empty()) {
        id = r["id"];
        report = r;
      }
    }
    if (!id.empty()) break;
    std::this_thread::sleep_for(seconds(1));
  }
  ASSERT_FALSE(id.empty()) << "no diagnosed leak report for " << *component << " in\n"
                           << last << drip.Logs();
  // The agent read the version from the process's environment: one host, one version.
  ASSERT_FALSE(report["hosts"].empty()) << report.dump(2);
  EXPECT_EQ(report["hosts"][0]["version"], "2.4.1-it") << report.dump(2);
  EXPECT_EQ(report["rollout"]["verdict"], "one-version") << report.dump(2);
  CommandOutput show = drip.Dripctl({"leaks", "show", id});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("RememberSession"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("leaky_service.cc:"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find(host), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("\nVersions\nevery host runs 2.4.1-it"), std::string::npos) << show.out;

  // The report's latest snapshot as a pprof profile: go tool pprof reads it, with the
  // leaking function on top (of the stacks Drip calls leaks) holding the in-use bytes
  // the report's diagnosis estimated from that snapshot.
  const std::string profile = drip.dir().File("latest.pb.gz");
  CommandOutput exported = drip.Dripctl({"leaks", "show", id, "--pprof", profile, "--json"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const nlohmann::json shown = nlohmann::json::parse(exported.out);
  GoPprofTop top = RunGoPprofTop("-tagfocus=verdict=leak " + profile);
  ASSERT_EQ(top.exit_status, 0) << "go tool pprof (package golang-go) failed:\n" << top.text;
  EXPECT_NE(top.first_row.find("RememberSession"), std::string::npos) << top.text;
  if (shown["latest_snapshot"]["finished_ms"] == shown["diagnosed_ms"]) {
    ASSERT_FALSE(shown["top_stacks"].empty()) << shown.dump(2);
    EXPECT_EQ(top.first_row_bytes, shown["top_stacks"][0]["live_bytes"].get<int64_t>())
        << top.text << shown.dump(2);
  }

  // A second snapshot of the same process comes a cool-down later; the report keeps the
  // first and the latest, and --diff names the leak as what grew between them, at about
  // the rate it leaks (4 MiB/s).
  for (int attempt = 0; attempt < 90; ++attempt) {
    CommandOutput json = drip.Dripctl({"leaks", "show", id, "--json"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    last = json.out;
    const nlohmann::json r = nlohmann::json::parse(json.out);
    if (!r["first_snapshot"].is_null() &&
        r["first_snapshot"]["command_id"] != r["latest_snapshot"]["command_id"]) {
      break;
    }
    std::this_thread::sleep_for(seconds(1));
  }
  const std::string diff_profile = drip.dir().File("diff.pb.gz");
  CommandOutput diff =
      drip.Dripctl({"leaks", "show", id, "--diff", "--json", "--pprof", diff_profile});
  ASSERT_EQ(diff.exit_code, 0) << diff.err << "\n" << last << drip.Logs();
  const nlohmann::json d = nlohmann::json::parse(diff.out);
  ASSERT_FALSE(d["sites"].empty()) << d.dump(2);
  const nlohmann::json& grew = d["sites"][0];
  EXPECT_NE(grew["frames"][0]["function"].get<std::string>().find("RememberSession"),
            std::string::npos)
      << d.dump(2);
  const double seconds_between =
      static_cast<double>(d["new_end_ms"].get<int64_t>() - d["base_end_ms"].get<int64_t>()) / 1000;
  const double leaked = 4096.0 * 1024 * seconds_between;
  EXPECT_GT(grew["grew_bytes"].get<double>(), 0.5 * leaked) << d.dump(2);
  EXPECT_LT(grew["grew_bytes"].get<double>(), 1.5 * leaked) << d.dump(2);
  top = RunGoPprofTop(diff_profile);
  ASSERT_EQ(top.exit_status, 0) << top.text;
  EXPECT_NE(top.first_row.find("RememberSession"), std::string::npos) << top.text;
  EXPECT_EQ(top.first_row_bytes, std::llround(grew["grew_bytes"].get<double>())) << top.text;
}

// Runs a copy of the leak scenarios program under its own name, `drip-NAME` (its plugin
// beside it), as `prefix` + program + `args`, with an agent that acts only on it and the
// collector's fast detector and snapshots, and returns the diagnosis of the snapshot the
// collector had taken of it. A copy, so that only this test's agent acts on it.
void DiagnoseAScenarioThroughTheFleetFlow(const std::string& name,
                                          const std::vector<std::string>& prefix,
                                          const std::vector<std::string>& args,
                                          nlohmann::json* diagnosis) {
  LocalDrip drip;
  ASSERT_TRUE(drip.StartCollector(std::string(kFastDetectorYaml) + kFastSnapshotsYaml).ok())
      << drip.Logs();
  const std::string host = fmt::format("it-{}-{}", name, getpid());
  namespace fs = std::filesystem;
  const fs::path original = DRIP_LEAK_SCENARIOS_FP_BIN;
  const std::string program = drip.dir().File("drip-" + name);
  fs::copy_file(original, program);
  for (const auto& entry : fs::directory_iterator(original.parent_path())) {
    if (entry.path().filename().string().rfind("libdrip_leak_plugin", 0) == 0) {
      fs::copy_file(entry.path(), fs::path(drip.dir().path()) / entry.path().filename());
    }
  }
  const std::string component = "proc:drip-" + name;
  drip.SetAgentAllowedComponents({component});
  ASSERT_TRUE(drip.StartAgent(host, milliseconds(1000)).ok()) << drip.Logs();
  std::vector<std::string> argv = prefix;
  argv.push_back(program);
  argv.insert(argv.end(), args.begin(), args.end());
  auto child = ChildProcess::Start(argv, drip.dir().File(name + ".log"));
  ASSERT_TRUE(child.ok()) << child.status();

  std::string last;
  const nlohmann::json suspect = WaitForSuspect(drip, host, component, seconds(150), &last);
  ASSERT_FALSE(suspect.is_null()) << "no suspect for " << component << " in\n"
                                  << last << drip.Logs() << (*child)->Log();
  const nlohmann::json snapshot =
      WaitForFinishedSnapshot(drip, host, component, seconds(300), &last);
  ASSERT_FALSE(snapshot.is_null()) << "no finished snapshot in\n" << last << drip.Logs();
  ASSERT_EQ(snapshot["state"], "done") << snapshot.dump(2) << drip.Logs();
  *diagnosis = snapshot["diagnosis"];
  ASSERT_FALSE((*diagnosis)["stacks"].empty()) << snapshot.dump(2);
}

// The top stack of a diagnosis is a leak whose innermost frame starts with `function`.
void ExpectTheLeakNamedFirst(const nlohmann::json& diagnosis, const std::string& function) {
  const nlohmann::json& top = diagnosis["stacks"][0];
  EXPECT_EQ(top["verdict"], "leak") << diagnosis.dump(2);
  ASSERT_FALSE(top["frames"].empty()) << diagnosis.dump(2);
  EXPECT_EQ(top["frames"][0].value("function", "").rfind(function, 0), 0u) << diagnosis.dump(2);
}

// A leak on one path of a churning site, through the fleet flow with the agent's defaults:
// 1 request in 50 keeps its 1 KiB context and the same stack frees the other 49, so in
// the heap alone it also looks like a structure still filling. The program runs with the
// shim preloaded (the agent then takes a preload snapshot), the collector sends the growth
// its detector measured with the command, the agent samples for that growth, and the
// diagnosis weighs the stack against it: a leak.
TEST(PipelineTest, ALeakOnOnePathOfAChurningSiteIsNamedWithTheGrowthTheCollectorMeasured) {
  // 256 KiB/s kept: 12,800 requests a second, each a 1 KiB malloc, 49 in 50 freed.
  nlohmann::json diagnosis;
  ASSERT_NO_FATAL_FAILURE(DiagnoseAScenarioThroughTheFleetFlow(
      "rarekeep", {"/usr/bin/env", std::string("LD_PRELOAD=") + DRIP_SAMPLER_SO},
      {"rarekeep", "--rate-kib-per-s", "256", "--seconds", "600"}, &diagnosis));
  ExpectTheLeakNamedFirst(diagnosis, "new_request_context");
  EXPECT_NE(diagnosis["stacks"][0].value("reason", "").find("the detector measured"),
            std::string::npos)
      << diagnosis.dump(2);
}

// A busy process without the shim, through the fleet flow with the agent's defaults: 30k
// allocations and as many frees a second (a ring of objects replaced as fast as it can),
// and a slow leak of 256 KiB/s beside them. Its frees alone would cost several times the
// attach-mode budget; the snapshot watches them only around its sampling windows and
// still reaches a verdict: the leak, named first.
TEST(PipelineTest, ABusyProcessWhoseFreesExceedTheAttachBudgetGetsAVerdictInTheFleetFlow) {
  nlohmann::json diagnosis;
  ASSERT_NO_FATAL_FAILURE(
      DiagnoseAScenarioThroughTheFleetFlow("churn", {}, {"churn", "--seconds", "600"}, &diagnosis));
  ExpectTheLeakNamedFirst(diagnosis, "leak_slowly_under_churn");
}

TEST(PipelineTest, DripctlSaysWhichCollectorItCannotReach) {
  CommandOutput out =
      RunCommand({DripctlBinary(), "--collector", "127.0.0.1:1", "--plaintext", "hosts"});
  EXPECT_EQ(out.exit_code, 3);
  EXPECT_NE(out.err.find("cannot reach collector at 127.0.0.1:1"), std::string::npos) << out.err;
  EXPECT_EQ(std::count(out.err.begin(), out.err.end(), '\n'), 1) << out.err;
}

TEST(PipelineTest, CollectorWithBadConfigExitsWithOneLineNamingTheKey) {
  TempDir dir;
  WriteFile(dir.File("bad.yaml"), "grpc:\n  listen_adress: 127.0.0.1:0\n");
  CommandOutput out = RunCommand({CollectorBinary(), "--config", dir.File("bad.yaml")});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.err.find("bad.yaml:2"), std::string::npos) << out.err;
  EXPECT_NE(out.err.find("grpc.listen_adress"), std::string::npos) << out.err;
}

TEST(PipelineTest, AgentWithBadConfigExitsWithOneLineNamingTheKey) {
  TempDir dir;
  WriteFile(dir.File("bad.yaml"), "interval: often\n");
  CommandOutput out = RunCommand({AgentBinary(), "--config", dir.File("bad.yaml")});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.err.find("bad.yaml:1"), std::string::npos) << out.err;
  EXPECT_NE(out.err.find("interval"), std::string::npos) << out.err;
}

}  // namespace
}  // namespace drip::testing
