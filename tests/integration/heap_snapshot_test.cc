// Live heap snapshots of the leak scenarios (tests/programs/leak_scenarios.cc), each built
// with and without frame pointers, in attach mode (uprobes on the allocator) and preload
// mode (libdrip_sampler.so): the real `drip-agent snapshot` then the real `dripctl
// diagnose --json` must rank the leaking function first, or find no leak in a decoy.
//
// The four variants of a scenario run at once (they are separate processes and separate
// BPF sessions) to keep the test's wall time near one snapshot per scenario.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/integration/child_process.h"
#include "tests/integration/local_drip.h"
#include "tests/programs/leak_scenarios_expectations.h"

namespace drip::testing {
namespace {

// The scenarios' pace: a cache fills over its first 6 s after "ready" and then plateaus,
// so a 16 s window sees it level off for 10 s. Everything else is drip-agent's defaults:
// the sampling period sized from the target's allocation rate (both modes), the 5 % CPU
// budget, and a window that extends itself (up to 4 x 16 s) while its evidence is short.
constexpr int kSnapshotSeconds = 16;
constexpr int kCacheFillSeconds = 6;  // the fixture's default --fill-seconds
constexpr int kLongestSnapshotSeconds = 4 * kSnapshotSeconds;

struct Variant {
  std::string build;  // "fp" or "nofp"
  std::string mode;   // "attach" or "preload"
};

struct Outcome {
  std::string failure;  // empty when it went as expected
  std::string detail;
};

std::string ProgramFor(const std::string& build) {
  return build == "fp" ? DRIP_LEAK_SCENARIOS_FP_BIN : DRIP_LEAK_SCENARIOS_NOFP_BIN;
}

// Starts the scenario, waits for its "ready <pid>" line, snapshots and diagnoses it.
Outcome RunVariant(const std::string& scenario, const Variant& v, const TempDir& dir) {
  Outcome outcome;
  const std::string tag = scenario + "-" + v.build + "-" + v.mode;
  std::vector<std::string> argv;
  if (v.mode == "preload") {
    // env(1) so that only the fixture, not the test, runs with the shim.
    argv = {"/usr/bin/env", "-u", "DRIP_SAMPLE_BYTES",
            std::string("LD_PRELOAD=") + DRIP_SAMPLER_SO};
  }
  argv.push_back(ProgramFor(v.build));
  argv.push_back(scenario);
  // Every allocation and free is a probe hit in attach mode (about 10 µs on these VMs), so
  // 30k frees a second cost the target more than the 5 % budget allows with the free probes
  // always on (the full-rate case is HeapSnapshotBusyTest's). Attach mode gets the churn and
  // the rare paths at rates whose frees usually fit the budget.
  if (scenario == "churn" && v.mode == "attach") {
    argv.insert(argv.end(), {"--churn-allocs-per-s", "500"});
  }
  if (scenario == "rare" && v.mode == "attach") {
    argv.insert(argv.end(), {"--rate-kib-per-s", "64"});  // 400 requests/s, 1 in 64 leaks
  }
  if (scenario == "rarekeep" && v.mode == "attach") {
    argv.insert(argv.end(), {"--rate-kib-per-s", "16"});  // 800 requests/s, 1 in 50 kept
  }
  auto child = ChildProcess::Start(argv, dir.File(tag + ".log"));
  if (!child.ok()) return {"cannot start: " + std::string(child.status().message()), ""};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (child.value()->Log().find("ready") == std::string::npos) {
    if (!child.value()->Running() || std::chrono::steady_clock::now() > deadline) {
      return {"fixture never got ready", child.value()->Log()};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // A cache is usually full when someone looks: the no-frame-pointer builds of the decoy
  // are snapshotted from mid-life, where the window tracks only what replaces the entries
  // it cannot see (the frame-pointer builds see it fill and level off).
  if (scenario == "cache" && v.build == "nofp") {
    std::this_thread::sleep_for(std::chrono::seconds(kCacheFillSeconds + 2));
  }
  const std::string snapshot = dir.File(tag + ".json");
  CommandOutput snap = RunCommand(
      {DRIP_AGENT_BIN, "snapshot", "--pid", std::to_string(child.value()->pid()), "--duration",
       std::to_string(kSnapshotSeconds), "--output", snapshot, "--mode", v.mode},
      std::chrono::seconds(kLongestSnapshotSeconds + 60));
  if (snap.exit_code != 0) return {"drip-agent snapshot failed", snap.err};
  CommandOutput diag =
      RunCommand({DRIPCTL_BIN, "diagnose", snapshot, "--json"}, std::chrono::seconds(60));
  if (diag.exit_code != 0) return {"dripctl diagnose failed", diag.err};
  nlohmann::json result = nlohmann::json::parse(diag.out, nullptr, false);
  if (result.is_discarded() || !result.contains("stacks")) return {"bad JSON", diag.out};
  const nlohmann::json& stacks = result["stacks"];
  const auto* expect = drip_fixture::FindLeakScenario(scenario);
  std::string top_function;
  std::string top_verdict;
  if (!stacks.empty()) {
    top_verdict = stacks[0].value("verdict", "");
    if (!stacks[0]["frames"].empty()) top_function = stacks[0]["frames"][0].value("function", "");
  }
  outcome.detail =
      snap.err + "\ntop: " + top_function + " (" + top_verdict + ")\n" + diag.out.substr(0, 4000);
  if (expect->expected_function_prefix == nullptr) {
    for (const auto& stack : stacks) {
      if (stack.value("verdict", "") == "leak") {
        outcome.failure = "a decoy was diagnosed as leaking";
        return outcome;
      }
    }
    return outcome;
  }
  if (top_verdict != "leak" || !drip_fixture::IsExpectedLeakFunction(*expect, top_function)) {
    outcome.failure = "the leaking function is not ranked first as a leak";
  }
  return outcome;
}

class HeapSnapshotTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HeapSnapshotTest, SnapshotAndDiagnoseRankTheLeakingFunctionFirstInBothModesAndBuilds) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for uprobes and BPF";
  const std::string scenario = GetParam();
  TempDir dir;
  const std::vector<Variant> variants = {
      {"fp", "attach"}, {"nofp", "attach"}, {"fp", "preload"}, {"nofp", "preload"}};
  std::vector<std::future<Outcome>> runs;
  for (const Variant& v : variants) {
    runs.push_back(std::async(std::launch::async, [&, v] { return RunVariant(scenario, v, dir); }));
  }
  for (size_t i = 0; i < variants.size(); ++i) {
    Outcome outcome = runs[i].get();
    // The kernel refusing the probes is the only acceptable reason not to judge.
    if (outcome.detail.find("the kernel refused") != std::string::npos) {
      GTEST_SKIP() << "the kernel refused BPF: " << outcome.detail;
    }
    EXPECT_TRUE(outcome.failure.empty()) << scenario << " " << variants[i].build << " "
                                         << variants[i].mode << ": " << outcome.failure << "\n"
                                         << outcome.detail;
  }
}

// The churn fixture (`argv`: its command line, wrappers first) once ready, snapshotted
// with drip-agent's defaults plus `flags`, and diagnosed with dripctl. `failure` says which
// step failed; `kernel_refused` that the kernel refused BPF (the one reason to skip).
struct ChurnDiagnosis {
  int pid = 0;
  CommandOutput snap;
  std::string diagnosis;  // dripctl diagnose --json, as printed
  nlohmann::json result;
  std::string failure;
  bool kernel_refused = false;
};

ChurnDiagnosis SnapshotTheChurnFixture(const TempDir& dir, const std::vector<std::string>& argv,
                                       const std::vector<std::string>& flags) {
  ChurnDiagnosis d;
  auto child = ChildProcess::Start(argv, dir.File("churn.log"));
  if (!child.ok()) {
    d.failure = "cannot start the fixture: " + std::string(child.status().message());
    return d;
  }
  for (int i = 0; i < 600 && child.value()->Log().find("ready") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  d.pid = child.value()->pid();
  const std::string snapshot = dir.File("churn.json");
  std::vector<std::string> command = {DRIP_AGENT_BIN, "snapshot",
                                      "--pid",        std::to_string(d.pid),
                                      "--duration",   std::to_string(kSnapshotSeconds),
                                      "--output",     snapshot};
  command.insert(command.end(), flags.begin(), flags.end());
  d.snap = RunCommand(command, std::chrono::seconds(kLongestSnapshotSeconds + 60));
  d.kernel_refused = d.snap.err.find("the kernel refused") != std::string::npos;
  if (d.snap.exit_code != 0) {
    d.failure = "drip-agent snapshot failed: " + d.snap.err;
    return d;
  }
  CommandOutput diag =
      RunCommand({DRIPCTL_BIN, "diagnose", snapshot, "--json"}, std::chrono::seconds(60));
  d.diagnosis = diag.out.substr(0, 4000);
  d.result = nlohmann::json::parse(diag.out, nullptr, false);
  if (diag.exit_code != 0 || d.result.is_discarded()) {
    d.failure = "dripctl diagnose failed: " + diag.err + diag.out.substr(0, 4000);
  }
  return d;
}

// The diagnosis names the fixture's slow leak first, as a leak.
void ExpectTheSlowLeakNamed(const ChurnDiagnosis& d) {
  ASSERT_EQ(d.result.value("outcome", ""), "leak") << d.snap.err << d.diagnosis;
  const nlohmann::json& top = d.result["stacks"][0];
  EXPECT_EQ(top["frames"][0].value("function", "").rfind("leak_slowly_under_churn", 0), 0u)
      << d.diagnosis;
}

// A busy process in attach mode with the defaults: 30k frees a second cost several times
// the 5 % budget with the free probes always on. The snapshot watches the frees only around
// its sampling windows instead of stopping, stays within its budget, and names the slow
// leak beside the churn.
TEST(HeapSnapshotBusyTest, AttachModeOnABusyProcessWatchesFreesAroundItsWindowsAndFindsTheLeak) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for uprobes and BPF";
  TempDir dir;
  const ChurnDiagnosis d = SnapshotTheChurnFixture(dir, {ProgramFor("fp"), "churn"}, {});
  if (d.kernel_refused) GTEST_SKIP() << "the kernel refused BPF: " << d.snap.err;
  ASSERT_TRUE(d.failure.empty()) << d.failure;
  EXPECT_EQ(d.snap.err.find("stopped: budget"), std::string::npos) << d.snap.err;
  ExpectTheSlowLeakNamed(d);
}

// A slow leak under heavy churn, snapshotted as the collector does: told the growth its
// detector measured. 8 KiB/s leaks next to 45 MB/s of churn (30k allocations a second),
// in preload mode with the agent's defaults otherwise, and the snapshot is told 4 KiB/s:
// a detector's measured growth is an estimate, and a leak exactly as fast as the snapshot
// is told is decided by sampling noise at the longest window (two CI runs on a loaded
// machine saw 10 and 13 of the 16 sampled allocations needed). The rate-based period
// (32 KiB) leaves a few samples of the leak in 16 s, which read as "no leak found"; told
// the growth, the agent samples densely enough within its cost limit and keeps the window
// going until a leak that fast would show, and the leak is named.
TEST(HeapSnapshotExpectedGrowthTest, ASlowLeakUnderHeavyChurnIsNamedWhenTheSnapshotKnowsItsGrowth) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for uprobes and BPF";
  TempDir dir;
  const ChurnDiagnosis d = SnapshotTheChurnFixture(
      dir,
      {"/usr/bin/env", "-u", "DRIP_SAMPLE_BYTES", std::string("LD_PRELOAD=") + DRIP_SAMPLER_SO,
       ProgramFor("fp"), "churn", "--rate-kib-per-s", "32"},
      {"--expect-growth", "4KiB/s"});
  if (d.kernel_refused) GTEST_SKIP() << "the kernel refused BPF: " << d.snap.err;
  ASSERT_TRUE(d.failure.empty()) << d.failure;
  ExpectTheSlowLeakNamed(d);
}

// Starts `drip-agent snapshot --mode preload --log-level info` of `pid` with `flags`, and
// waits until it says its probes are attached. `refused` says the kernel refused BPF (the
// one reason to skip); an error, that it never attached.
absl::StatusOr<std::unique_ptr<ChildProcess>> StartAttachedPreloadSnapshot(
    const TempDir& dir, int pid, const std::vector<std::string>& flags, bool* refused) {
  std::vector<std::string> argv = {DRIP_AGENT_BIN, "snapshot", "--pid",       std::to_string(pid),
                                   "--mode",       "preload",  "--log-level", "info"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  absl::StatusOr<std::unique_ptr<ChildProcess>> agent =
      ChildProcess::Start(argv, dir.File("agent.log"));
  if (!agent.ok()) return agent.status();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((*agent)->Log().find("preload mode via") == std::string::npos) {
    if (!(*agent)->Running()) break;
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError("never attached: " + (*agent)->Log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *refused = (*agent)->Log().find("the kernel refused") != std::string::npos;
  if (!*refused && !(*agent)->Running()) {
    return absl::InternalError("exited before attaching: " + (*agent)->Log());
  }
  return agent;
}

// exec(2) drops the target's address space with every allocation the snapshot follows:
// read on, they would all look leaked. The snapshot must end with an error that says so,
// never with a diagnosis. The target execs on the test's word, once the agent says its
// probes are attached.
TEST(HeapSnapshotExecTest, ATargetThatExecsMidSnapshotEndsItWithAnErrorNotALeak) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for uprobes and BPF";
  TempDir dir;
  const std::string fifo = dir.File("go");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto target =
      ChildProcess::Start({"/usr/bin/env", std::string("LD_PRELOAD=") + DRIP_SAMPLER_SO, "/bin/sh",
                           "-c", "echo ready; read go < " + fifo + "; exec /bin/sleep 120"},
                          dir.File("target.log"));
  ASSERT_TRUE(target.ok()) << target.status();
  for (int i = 0; i < 600 && (*target)->Log().find("ready") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  bool refused = false;
  auto agent = StartAttachedPreloadSnapshot(
      dir, (*target)->pid(), {"--duration", "60", "--output", dir.File("s.json")}, &refused);
  ASSERT_TRUE(agent.ok()) << agent.status();
  if (refused) GTEST_SKIP() << "the kernel refused BPF: " << (*agent)->Log();
  std::ofstream(fifo) << "go\n";  // the target execs sleep
  const std::optional<int> status = (*agent)->Wait(std::chrono::seconds(30));
  ASSERT_TRUE(status.has_value()) << "the snapshot went on after the exec\n" << (*agent)->Log();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) != 0) << (*agent)->Log();
  EXPECT_NE((*agent)->Log().find("ran exec"), std::string::npos) << (*agent)->Log();
  EXPECT_FALSE(std::ifstream(dir.File("s.json")).good()) << "a snapshot was written";
}

// An agent that falls behind loses the sampled allocations of a stretch of the window (its
// ring buffer holds some 5 s of them): a leak then adds nothing across the gap and looks
// levelled off. Here the agent is stopped (SIGSTOP) for 9 s of a 12 s window on a leak on
// one path of a churning site, with the agent's defaults and the growth the collector
// would pass; before the loss was counted, that read as a cache. The snapshot counts what
// it lost, and the leak is never called a cache nor the snapshot "no leak found".
TEST(HeapSnapshotStallTest, AnAgentStoppedForMostOfTheWindowNeverCallsTheLeakACache) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for uprobes and BPF";
  TempDir dir;
  auto target = ChildProcess::Start(
      {"/usr/bin/env", "-u", "DRIP_SAMPLE_BYTES", std::string("LD_PRELOAD=") + DRIP_SAMPLER_SO,
       ProgramFor("fp"), "rarekeep", "--rate-kib-per-s", "256", "--seconds", "300"},
      dir.File("target.log"));
  ASSERT_TRUE(target.ok()) << target.status();
  for (int i = 0; i < 600 && (*target)->Log().find("ready") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string snapshot = dir.File("s.json");
  bool refused = false;
  auto agent = StartAttachedPreloadSnapshot(
      dir, (*target)->pid(),
      {"--duration", "12", "--expect-growth", "900MiB/h", "--output", snapshot}, &refused);
  ASSERT_TRUE(agent.ok()) << agent.status();
  if (refused) GTEST_SKIP() << "the kernel refused BPF: " << (*agent)->Log();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  (*agent)->Signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::seconds(9));
  (*agent)->Signal(SIGCONT);
  const std::optional<int> status = (*agent)->Wait(std::chrono::seconds(kLongestSnapshotSeconds));
  ASSERT_TRUE(status.has_value() && WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << (*agent)->Log();
  std::ifstream in(snapshot);
  const nlohmann::json taken = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(taken.is_discarded()) << (*agent)->Log();
  EXPECT_GT(taken["events"].value("lost_while_behind", 0), 0) << taken["events"].dump();

  CommandOutput diag =
      RunCommand({DRIPCTL_BIN, "diagnose", snapshot, "--json"}, std::chrono::seconds(60));
  ASSERT_EQ(diag.exit_code, 0) << diag.err;
  const nlohmann::json result = nlohmann::json::parse(diag.out, nullptr, false);
  ASSERT_FALSE(result.is_discarded()) << diag.out;
  EXPECT_NE(result.value("outcome", ""), "no_leak") << diag.out.substr(0, 4000);
  bool named = false;
  for (const nlohmann::json& stack : result["stacks"]) {
    if (stack["frames"].empty()) continue;
    if (stack["frames"][0].value("function", "").rfind("new_request_context", 0) != 0) continue;
    named = true;
    EXPECT_NE(stack.value("verdict", ""), "cache") << stack.value("reason", "");
  }
  EXPECT_TRUE(named) << diag.out.substr(0, 4000);
}

// Debian's redis-server with the preload shim, on the unix socket `socket` with `extra`
// flags, once it listens; an error says what is missing or what redis printed.
absl::StatusOr<std::unique_ptr<ChildProcess>> StartRedisWithTheShim(
    const TempDir& dir, const std::string& socket, const std::vector<std::string>& extra) {
  const std::string server = "/usr/bin/redis-server";
  if (access(server.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(server + " missing: scripts/install-deps.sh installs it");
  }
  std::vector<std::string> argv = {"/usr/bin/env",
                                   std::string("LD_PRELOAD=") + DRIP_SAMPLER_SO,
                                   server,
                                   "--port",
                                   "0",
                                   "--unixsocket",
                                   socket,
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--dir",
                                   dir.path()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  absl::StatusOr<std::unique_ptr<ChildProcess>> redis =
      ChildProcess::Start(argv, dir.File("redis.log"));
  if (!redis.ok()) return redis.status();
  for (int i = 0; i < 100 && access(socket.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (access(socket.c_str(), F_OK) != 0) {
    return absl::UnavailableError("redis never listened: " + (*redis)->Log());
  }
  return redis;
}

// A real service's bounded cache, the decoy on-call meets most: Debian's redis-server
// (jemalloc) as an LRU cache of 24 MiB (maxmemory, allkeys-lru), filled by a real client
// writing new 4 KiB keys (about 2 MB/s), snapshotted once it evicts, with the preload shim
// and drip-agent's defaults. What the window tracks rises while the cache turns over,
// but nothing may be called a leak: redis's memory is flat. (Before survival by age and
// the process-growth bound, the 8 s window called the cache's values and keys leaks.)
TEST(HeapSnapshotRealServiceTest, RedisLruCacheAtCapacityUnderARealClientIsNotALeak) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for BPF";
  const std::string client = "/usr/bin/redis-cli";
  ASSERT_EQ(access(client.c_str(), X_OK), 0) << client << " missing (redis-tools)";
  TempDir dir;
  const std::string socket = dir.File("redis.sock");
  auto redis = StartRedisWithTheShim(dir, socket,
                                     {"--maxmemory", "24mb", "--maxmemory-policy", "allkeys-lru"});
  ASSERT_TRUE(redis.ok()) << redis.status();
  // A new key every 2 ms (one in ten million repeats).
  auto writer = ChildProcess::Start(
      {client, "-s", socket, "-r", "-1", "-i", "0.002", "EVAL",
       "redis.call('SET', 'k'..math.random(1, 10000000), string.rep('x', 4096))", "0"},
      dir.File("redis-cli.log"));
  ASSERT_TRUE(writer.ok()) << writer.status();
  // At capacity: redis has started evicting.
  auto evicted_keys = [&](std::string* stats) {
    *stats = RunCommand({client, "-s", socket, "info", "stats"}, std::chrono::seconds(10)).out;
    const size_t at = stats->find("evicted_keys:");
    return at == std::string::npos ? 0L : std::strtol(stats->c_str() + at + 13, nullptr, 10);
  };
  std::string stats;
  for (int i = 0; i < 120 && evicted_keys(&stats) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_GT(evicted_keys(&stats), 0) << "redis never filled: " << stats << (*redis)->Log();

  // Shorter than an entry's life in the cache (about 12 s): every entry the window sees
  // arriving is still there at its end, as a leak's would be.
  constexpr int kRedisSnapshotSeconds = 8;
  const std::string snapshot = dir.File("redis.json");
  CommandOutput snap = RunCommand(
      {DRIP_AGENT_BIN, "snapshot", "--pid", std::to_string((*redis)->pid()), "--duration",
       std::to_string(kRedisSnapshotSeconds), "--output", snapshot, "--mode", "preload"},
      std::chrono::seconds(4 * kRedisSnapshotSeconds + 60));
  if (snap.err.find("the kernel refused") != std::string::npos) {
    GTEST_SKIP() << "the kernel refused BPF: " << snap.err;
  }
  ASSERT_EQ(snap.exit_code, 0) << snap.err;
  EXPECT_NE(snap.err.find("allocator jemalloc"), std::string::npos) << snap.err;
  CommandOutput diag =
      RunCommand({DRIPCTL_BIN, "diagnose", snapshot, "--json"}, std::chrono::seconds(60));
  ASSERT_EQ(diag.exit_code, 0) << diag.err;
  const nlohmann::json result = nlohmann::json::parse(diag.out, nullptr, false);
  ASSERT_FALSE(result.is_discarded()) << diag.out;
  EXPECT_NE(result.value("outcome", ""), "leak") << snap.err << diag.out.substr(0, 4000);
  for (const auto& stack : result["stacks"]) {
    EXPECT_NE(stack.value("verdict", ""), "leak") << snap.err << stack.dump(2);
  }
}

// The same service leaking: Debian's redis-server (jemalloc) with the shim preloaded,
// under redis-benchmark writing new keys as fast as two clients can (a keyspace that only
// grows, about 10 MB/s), snapshotted in preload mode with drip-agent's defaults. The
// diagnosis names the keyspace's growth as a leak. (How much the snapshot costs the
// clients' requests/s is bench/redis_snapshot_overhead.sh's to measure, not this test's.)
TEST(HeapSnapshotRealServiceTest, RedisWithAGrowingKeyspaceUnderARealClientIsALeakInPreloadMode) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for BPF";
  const std::string benchmark = "/usr/bin/redis-benchmark";
  ASSERT_EQ(access(benchmark.c_str(), X_OK), 0) << benchmark << " missing (redis-tools)";
  TempDir dir;
  const std::string socket = dir.File("redis.sock");
  auto redis = StartRedisWithTheShim(dir, socket, {});
  ASSERT_TRUE(redis.ok()) << redis.status();
  // SET of 200-byte values under keys drawn from a hundred million: nearly every one new.
  auto clients = ChildProcess::Start({benchmark, "-s", socket, "-t", "set", "-n", "1000000000",
                                      "-r", "100000000", "-d", "200", "-c", "2", "-q"},
                                     dir.File("redis-benchmark.log"));
  ASSERT_TRUE(clients.ok()) << clients.status();
  std::this_thread::sleep_for(std::chrono::seconds(2));

  const std::string snapshot = dir.File("redis.json");
  CommandOutput snap =
      RunCommand({DRIP_AGENT_BIN, "snapshot", "--pid", std::to_string((*redis)->pid()),
                  "--duration", std::to_string(kSnapshotSeconds), "--output", snapshot},
                 std::chrono::seconds(kLongestSnapshotSeconds + 60));
  (*clients)->Signal(SIGKILL);
  if (snap.err.find("the kernel refused") != std::string::npos) {
    GTEST_SKIP() << "the kernel refused BPF: " << snap.err;
  }
  ASSERT_EQ(snap.exit_code, 0) << snap.err;
  EXPECT_NE(snap.err.find("preload mode"), std::string::npos) << snap.err;
  CommandOutput diag =
      RunCommand({DRIPCTL_BIN, "diagnose", snapshot, "--json"}, std::chrono::seconds(60));
  ASSERT_EQ(diag.exit_code, 0) << diag.err;
  const nlohmann::json result = nlohmann::json::parse(diag.out, nullptr, false);
  ASSERT_FALSE(result.is_discarded()) << diag.out;
  ASSERT_EQ(result.value("outcome", ""), "leak") << snap.err << diag.out.substr(0, 4000);
  // The top stack stores a key or a value of the keyspace, whatever the allocator frames.
  std::string frames;
  for (const auto& f : result["stacks"][0]["frames"]) frames += f.value("function", "") + "\n";
  EXPECT_TRUE(frames.find("sdsnewlen") != std::string::npos ||
              frames.find("createStringObject") != std::string::npos ||
              frames.find("dictAdd") != std::string::npos)
      << frames << diag.out.substr(0, 4000);
}

// The allocators services are built with: tcmalloc (gperftools) and jemalloc as Debian
// ships them, put under the C++ `new` scenario with LD_PRELOAD as a service linked with
// them would have them (their own operator new, which never calls malloc: the shim must
// interpose it too), and glibc's malloc linked into a static executable. Attach mode probes
// whichever serves malloc; preload mode's shim forwards to it. Each snapshot must say which
// allocator it found and the diagnosis must name the leak, with default options. (tcmalloc
// aliases free to operator delete and delete[]: probed once per address, its frees cost
// what glibc's do; probed per name, they went over attach mode's budget at once.)
class HeapSnapshotAllocatorTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HeapSnapshotAllocatorTest, AttachAndPreloadNameTheAllocatorAndTheLeak) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for uprobes and BPF";
  const std::string allocator = GetParam();
  std::string library, program = ProgramFor("fp"), expected = allocator;
  std::vector<std::string> modes = {"attach", "preload"};
  if (allocator == "static") {
    program = DRIP_LEAK_SCENARIOS_STATIC_BIN;
    expected = "executable";
    modes = {"attach"};  // nothing to preload into a static executable
  } else {
    library = allocator == "tcmalloc" ? "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
                                      : "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
    ASSERT_EQ(access(library.c_str(), R_OK), 0)
        << library << " missing: scripts/install-deps.sh installs libtcmalloc-minimal4 and "
        << "libjemalloc2";
  }
  TempDir dir;
  auto run = [&](const std::string& mode) -> std::string {
    std::vector<std::string> argv = {"/usr/bin/env", "-u", "DRIP_SAMPLE_BYTES"};
    if (mode == "preload") {
      argv.push_back(std::string("LD_PRELOAD=") + DRIP_SAMPLER_SO + ":" + library);
    } else if (!library.empty()) {
      argv.push_back("LD_PRELOAD=" + library);
    }
    argv.insert(argv.end(), {program, "new"});
    auto child = ChildProcess::Start(argv, dir.File(mode + ".log"));
    if (!child.ok()) return "cannot start: " + std::string(child.status().message());
    for (int i = 0; i < 600 && (*child)->Log().find("ready") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if ((*child)->Log().find("ready") == std::string::npos)
      return "never ready: " + (*child)->Log();
    const std::string snapshot = dir.File(mode + ".json");
    CommandOutput snap = RunCommand(
        {DRIP_AGENT_BIN, "snapshot", "--pid", std::to_string((*child)->pid()), "--duration",
         std::to_string(kSnapshotSeconds), "--output", snapshot, "--mode", mode},
        std::chrono::seconds(kLongestSnapshotSeconds + 60));
    if (snap.err.find("the kernel refused") != std::string::npos) return "refused: " + snap.err;
    if (snap.exit_code != 0) return "snapshot failed: " + snap.err;
    if (snap.err.find("allocator " + expected + ",") == std::string::npos) {
      return "allocator " + expected + " not named: " + snap.err;
    }
    CommandOutput diag =
        RunCommand({DRIPCTL_BIN, "diagnose", snapshot, "--json"}, std::chrono::seconds(60));
    const nlohmann::json result = nlohmann::json::parse(diag.out, nullptr, false);
    if (result.is_discarded() || result["stacks"].empty()) return "bad diagnosis: " + diag.out;
    const nlohmann::json& top = result["stacks"][0];
    if (result.value("outcome", "") != "leak" || top.value("verdict", "") != "leak" ||
        !drip_fixture::IsExpectedLeakFunction(*drip_fixture::FindLeakScenario("new"),
                                              top["frames"][0].value("function", ""))) {
      return "the leak is not named first: " + snap.err + diag.out.substr(0, 3000);
    }
    return "";
  };
  std::vector<std::future<std::string>> runs;
  for (const std::string& mode : modes) {
    runs.push_back(std::async(std::launch::async, [&, mode] { return run(mode); }));
  }
  for (size_t i = 0; i < modes.size(); ++i) {
    const std::string failure = runs[i].get();
    if (failure.rfind("refused: ", 0) == 0) GTEST_SKIP() << "the kernel refused BPF: " << failure;
    EXPECT_EQ(failure, "") << allocator << " " << modes[i];
  }
}

// A program calling jemalloc's own API by name (mallocx, sdallocx), as folly does when it
// finds jemalloc. Attach mode probes those entry points and names the leak; the preload
// shim interposes only the malloc family, so its snapshot names the calls it could not
// sample, the process keeps running, and the diagnosis says to take an attach snapshot.
TEST(HeapSnapshotOwnApiTest, JemallocCallsByNameAreProbedInAttachModeAndNamedAsUnsampledInPreload) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for uprobes and BPF";
  const std::string program = DRIP_JEMALLOC_API_LEAK_BIN;
  ASSERT_FALSE(program.empty())
      << "drip-jemalloc-api-leak was not built: scripts/install-deps.sh installs libjemalloc2";
  TempDir dir;
  // Both modes at once, each on its own copy of the program. The preload leg checks what
  // the snapshot says it missed, not a verdict: its window, which sees no growing stack,
  // is kept from extending itself to the limit.
  const std::vector<std::string> modes = {"attach", "preload"};
  std::vector<std::unique_ptr<ChildProcess>> children;
  std::vector<std::future<CommandOutput>> snaps;
  for (const std::string& mode : modes) {
    std::vector<std::string> argv = {"/usr/bin/env", "-u", "DRIP_SAMPLE_BYTES"};
    if (mode == "preload") argv.push_back(std::string("LD_PRELOAD=") + DRIP_SAMPLER_SO);
    argv.push_back(program);
    auto child = ChildProcess::Start(argv, dir.File(mode + ".log"));
    ASSERT_TRUE(child.ok()) << child.status();
    for (int i = 0; i < 600 && (*child)->Log().find("ready") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_NE((*child)->Log().find("ready"), std::string::npos) << (*child)->Log();
    std::vector<std::string> snapshot_argv = {DRIP_AGENT_BIN, "snapshot",
                                              "--pid",        std::to_string((*child)->pid()),
                                              "--duration",   std::to_string(kSnapshotSeconds),
                                              "--output",     dir.File(mode + ".json"),
                                              "--mode",       mode};
    if (mode == "preload") {
      snapshot_argv.insert(snapshot_argv.end(),
                           {"--extend-up-to", std::to_string(kSnapshotSeconds)});
    }
    snaps.push_back(std::async(std::launch::async, RunCommand, snapshot_argv,
                               std::chrono::seconds(kLongestSnapshotSeconds + 60)));
    children.push_back(std::move(*child));
  }
  for (size_t m = 0; m < modes.size(); ++m) {
    const std::string& mode = modes[m];
    SCOPED_TRACE(mode);
    const CommandOutput snap = snaps[m].get();
    if (snap.err.find("the kernel refused") != std::string::npos) {
      GTEST_SKIP() << "the kernel refused BPF: " << snap.err;
    }
    ASSERT_EQ(snap.exit_code, 0) << snap.err;
    EXPECT_NE(snap.err.find("allocator jemalloc,"), std::string::npos) << snap.err;
    EXPECT_EQ(kill(children[m]->pid(), 0), 0) << "the target died under the snapshot";
    const std::string snapshot = dir.File(mode + ".json");
    const nlohmann::json raw = nlohmann::json::parse(std::ifstream(snapshot), nullptr, false);
    ASSERT_FALSE(raw.is_discarded());
    CommandOutput diag =
        RunCommand({DRIPCTL_BIN, "diagnose", snapshot, "--json"}, std::chrono::seconds(60));
    const nlohmann::json result = nlohmann::json::parse(diag.out, nullptr, false);
    ASSERT_FALSE(result.is_discarded()) << diag.out << diag.err;
    if (mode == "attach") {
      EXPECT_FALSE(raw["events"].contains("unsampled_calls")) << raw["events"].dump();
      ASSERT_FALSE(result["stacks"].empty()) << diag.out;
      EXPECT_EQ(result.value("outcome", ""), "leak") << diag.out.substr(0, 3000);
      EXPECT_EQ(result["stacks"][0]["frames"][0].value("function", ""), "keep_order_record")
          << diag.out.substr(0, 3000);
    } else {
      EXPECT_EQ(raw["events"]["unsampled_calls"], nlohmann::json({"mallocx", "sdallocx"}))
          << raw["events"].dump();
      EXPECT_NE(snap.err.find("not sampled: the program's calls to mallocx, sdallocx"),
                std::string::npos)
          << snap.err;
      EXPECT_NE(result.value("summary", "").find("not sampled"), std::string::npos) << diag.out;
      for (const auto& stack : result["stacks"]) {
        EXPECT_NE(stack["frames"][0].value("function", ""), "keep_order_record") << diag.out;
      }
      if (result.value("outcome", "") == "inconclusive") {
        EXPECT_NE(result.value("next_step", "").find("--mode attach"), std::string::npos)
            << diag.out;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Allocators, HeapSnapshotAllocatorTest,
                         ::testing::Values("tcmalloc", "jemalloc", "static"),
                         [](const auto& info) { return info.param; });

INSTANTIATE_TEST_SUITE_P(Scenarios, HeapSnapshotTest,
                         ::testing::Values("plain", "new", "rare", "rarekeep", "churn", "realloc",
                                           "library", "cache", "startup", "cacheleak",
                                           "startupleak"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace drip::testing
