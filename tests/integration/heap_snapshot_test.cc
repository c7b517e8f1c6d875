// Live heap snapshots of the leak scenarios (tests/programs/leak_scenarios.cc), each built
// with and without frame pointers, in attach mode (uprobes on the allocator) and preload
// mode (libdrip_sampler.so): the real `drip-agent snapshot` then the real `dripctl
// diagnose --json` must rank the leaking function first, or find no leak in a decoy.
//
// The four variants of a scenario run at once (they are separate processes and separate
// BPF sessions) to keep the test's wall time near one snapshot per scenario.
#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
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
// so a 16 s window sees it level off for 10 s.
constexpr int kSnapshotSeconds = 16;
// Attach mode's mean bytes between samples (preload mode's is the shim's 64 KiB, set in its
// environment). Its duty cycle watches allocations only part of the time, so it samples
// more densely to see as many leaked objects in a 16 s window: at 64 KiB a rare path's
// 4-16 KiB buffers gave ~25 samples, too few to tell a steady leak from a levelling one.
constexpr const char* kAttachSampleBytes = "16384";

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
    argv = {"/usr/bin/env", std::string("LD_PRELOAD=") + DRIP_SAMPLER_SO,
            "DRIP_SAMPLE_BYTES=65536"};
  }
  argv.push_back(ProgramFor(v.build));
  argv.push_back(scenario);
  // Every allocation and free is a probe hit in attach mode (about 20 µs on these VMs), so
  // 15-30k calls a second cost the target more than any budget allows; that is what
  // preload mode is for. Attach mode gets the same scenarios at a call rate it can follow
  // without duty-cycling (docs/snapshot.md: a duty cycle thins the sample).
  if (scenario == "churn" && v.mode == "attach") {
    argv.insert(argv.end(), {"--churn-allocs-per-s", "5000"});  // still ~30x the leak
  }
  if (scenario == "rare" && v.mode == "attach") {
    argv.insert(argv.end(), {"--rate-kib-per-s", "256"});  // 1,600 requests/s, 1 in 64 leaks
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
  const std::string snapshot = dir.File(tag + ".json");
  CommandOutput snap = RunCommand(
      {DRIP_AGENT_BIN, "snapshot", "--pid", std::to_string(child.value()->pid()), "--duration",
       std::to_string(kSnapshotSeconds), "--output", snapshot, "--mode", v.mode, "--sample-bytes",
       kAttachSampleBytes, "--cpu-budget", "0.5", "--interval", "0.5"},
      std::chrono::seconds(kSnapshotSeconds + 60));
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

INSTANTIATE_TEST_SUITE_P(Scenarios, HeapSnapshotTest,
                         ::testing::Values("plain", "new", "rare", "churn", "realloc", "library",
                                           "cache", "startup"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace drip::testing
