#include "cli/diagnose_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/exit_codes.h"
#include "common/snapshot/heap_snapshot_json.h"
#include "diagnoser/heap_diagnoser.h"
#include "diagnoser/synthetic_heap.h"
#include "nlohmann/json.hpp"
#include "tests/support/go_pprof.h"

namespace drip::cli {
namespace {

using diagnoser::testing::AllocationSite;
using diagnoser::testing::Frame;
using diagnoser::testing::SyntheticHeap;
using diagnoser::testing::SyntheticOptions;
using drip::testing::GoPprofTop;
using drip::testing::RunGoPprofTop;

constexpr int64_t kHourMs = 3'600'000;

// A leak under request churn, next to a cache that fills and levels off (or, with
// `cache_from_s` before the window, is already full and replaces its entries). Its window
// starts `start_ms` (the synthetic default when 0).
HeapSnapshot LeakySnapshot(bool with_leak = true, int64_t start_ms = 0, double cache_from_s = 0) {
  SyntheticOptions options;
  options.duration_s = 1800;
  if (start_ms != 0) options.start_ms = start_ms;
  options.seed = static_cast<uint32_t>(1 + start_ms % 97);
  SyntheticHeap heap(options);
  if (with_leak) {
    AllocationSite leak;
    leak.frames = {Frame("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
                   Frame("_Znwm", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
                   Frame("Session::Remember(Request const&)", "/usr/bin/app", "src/session.cc", 88),
                   Frame("main", "/usr/bin/app", "src/main.cc", 12)};
    leak.rate_per_s = 100;
    leak.size = 200;
    heap.AddSite(leak);
  }
  AllocationSite cache;
  cache.frames = {Frame("_Znwm", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
                  Frame("LruCache::Insert(Key const&, Value)", "/usr/bin/app", "src/lru.cc", 57)};
  cache.rate_per_s = 200;
  cache.size = 1024;
  cache.fifo_capacity = 126'000;
  cache.from_s = cache_from_s;
  heap.AddSite(cache);
  AllocationSite churn;
  churn.frames = {Frame("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
                  Frame("Buffer::Buffer(unsigned long)", "/usr/bin/app", "src/buffer.cc", 20)};
  churn.rate_per_s = 2000;
  churn.size = 4096;
  churn.lifetime_s = 2;
  heap.AddSite(churn);
  HeapSnapshot snapshot = heap.Build();
  snapshot.duty_cycle = {0.05, 5000, 0.8, 123456, 0.012};
  snapshot.stop_detail = "ran for the 30 min asked";
  snapshot.target.pid = 4242;
  snapshot.target.comm = "app";
  snapshot.target.start_time_ms = 1'690'000'000'000;  // one process, whatever the window
  return snapshot;
}

std::string Render(const HeapSnapshot& snapshot, bool json, int top = 20) {
  std::ostringstream out;
  RenderDiagnosis(snapshot, diagnoser::HeapDiagnoser().Diagnose(snapshot), json, top, out);
  return out.str();
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name + "." + std::to_string(::getpid());
  std::ofstream(path) << text;
  return path;
}

TEST(DiagnoseCommandTest, TableRanksTheLeakFirstAndPrintsItsStack) {
  const std::string text = Render(LeakySnapshot(), /*json=*/false);
  EXPECT_NE(text.find("target    pid 4242 (app) on web-1, svc:app.service\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("window    attach mode, 2023-11-14 22:13:20 to 2023-11-14 22:43:20 UTC "
                      "(30 min, read every 10 s)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sampling  one sample per 512.0 KiB allocated on average (Poisson)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("probes    on 80% of the window, 1.20% of a core (budget 5.00%)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("stopped   duration: ran for the 30 min asked\n"), std::string::npos);
  EXPECT_NE(text.find("anon RSS  +"), std::string::npos) << text;
  EXPECT_NE(text.find("\n1 leak: Session::Remember(Request const&) (session.cc:88) +"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("RANK  VERDICT    SCORE  LIVE"), std::string::npos) << text;
  // Row 1 is the leak, by its first frame past the allocator.
  const size_t row1 = text.find("\n1     leak ");
  ASSERT_NE(row1, std::string::npos) << text;
  const std::string line1 = text.substr(row1 + 1, text.find('\n', row1 + 1) - row1 - 1);
  EXPECT_NE(line1.find("/h"), std::string::npos) << line1;
  EXPECT_TRUE(line1.ends_with("Session::Remember(Request const&) (session.cc:88)")) << line1;
  EXPECT_NE(text.find("\n2     cache "), std::string::npos) << text;
  EXPECT_NE(text.find("\n3     transient "), std::string::npos) << text;
  // The leak's whole stack, one frame per line, allocator frames dropped.
  EXPECT_NE(text.find("\n#1 leak, stack 1: "), std::string::npos) << text;
  EXPECT_NE(text.find("\n  #0  Session::Remember(Request const&) (session.cc:88)  [app+0x"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  #1  main (main.cc:12)  [app+0x"), std::string::npos) << text;
  EXPECT_EQ(text.find("malloc"), std::string::npos) << text;
  EXPECT_EQ(text.find("_Znwm"), std::string::npos) << text;
}

// A snapshot file's names come from a host and its target: an escape sequence in the
// target's command or a symbol must reach on-call's terminal as text, not as a command.
TEST(DiagnoseCommandTest, ControlBytesFromTheSnapshotNeverReachTheTerminal) {
  HeapSnapshot snapshot = LeakySnapshot();
  snapshot.target.comm = "app\x1b]0;owned\x07";
  snapshot.target.host = "web-1\r\nFAKE LINE";
  for (auto& stack : snapshot.stacks) {
    for (auto& frame : stack.frames) {
      if (frame.function.starts_with("Session::")) frame.function = "Session::\x1b[2JRemember";
    }
  }
  const std::string text = Render(snapshot, /*json=*/false);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_EQ(text.find('\x07'), std::string::npos);
  EXPECT_NE(text.find("app?]0;owned?"), std::string::npos) << text;
  EXPECT_NE(text.find("web-1??FAKE LINE"), std::string::npos) << text;
  EXPECT_NE(text.find("Session::?[2JRemember"), std::string::npos) << text;
}

// The JSON form too: a C1 control (U+009B, CSI to an 8-bit terminal) in a symbol is written
// as an escape, and reads back as the same string.
TEST(DiagnoseCommandTest, JsonWritesNonAsciiAsEscapesSoNoControlByteIsPrinted) {
  HeapSnapshot snapshot = LeakySnapshot();
  for (auto& stack : snapshot.stacks) {
    for (auto& frame : stack.frames) {
      if (frame.function.starts_with("Session::")) frame.function = "Session::\xc2\x9b[2JRemember";
    }
  }
  const std::string text = Render(snapshot, /*json=*/true);
  EXPECT_EQ(std::count_if(text.begin(), text.end(),
                          [](char c) { return static_cast<unsigned char>(c) >= 0x80; }),
            0)
      << text;
  EXPECT_NE(text.find("\\u009b[2JRemember"), std::string::npos) << text;
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["stacks"][0]["frames"][0]["function"], "Session::\xc2\x9b[2JRemember") << text;
}

TEST(DiagnoseCommandTest, JsonFollowsTheContractMostLikelyLeakFirst) {
  const std::string text = Render(LeakySnapshot(), /*json=*/true);
  const nlohmann::json j = nlohmann::json::parse(text);
  const nlohmann::json& stacks = j["stacks"];
  ASSERT_EQ(stacks.size(), 3u);
  EXPECT_EQ(stacks[0]["verdict"], "leak");
  EXPECT_EQ(stacks[1]["verdict"], "cache");
  EXPECT_EQ(stacks[2]["verdict"], "transient");
  const nlohmann::json& frame = stacks[0]["frames"][0];
  EXPECT_EQ(frame["function"], "Session::Remember(Request const&)");
  EXPECT_EQ(frame["module"], "/usr/bin/app");
  EXPECT_EQ(frame["file"], "src/session.cc");
  EXPECT_EQ(frame["line"], 88);
  EXPECT_EQ(stacks[0]["frames"].size(), 2u);
  for (const char* key : {"live_bytes", "live_allocs"}) {
    EXPECT_TRUE(stacks[0][key].is_number_integer()) << key;
  }
  for (const char* key : {"growth_bytes_per_hour", "score"}) {
    EXPECT_TRUE(stacks[0][key].is_number()) << key;
  }
  EXPECT_GT(stacks[0]["score"].get<double>(), stacks[1]["score"].get<double>());
  EXPECT_EQ(j["snapshot"]["target"]["pid"], 4242);
  EXPECT_TRUE(j["summary"].is_string());
}

TEST(DiagnoseCommandTest, TopLimitsTheTableAndSaysHowManyMore) {
  const std::string text = Render(LeakySnapshot(), /*json=*/false, /*top=*/1);
  EXPECT_NE(text.find("(2 more stacks; --top 0 or --json lists them all)"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("\n2     cache "), std::string::npos) << text;
}

TEST(DiagnoseCommandTest, NoLeakPrintsNoStack) {
  const std::string text = Render(LeakySnapshot(/*with_leak=*/false), /*json=*/false);
  EXPECT_NE(text.find("\nno leak found"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n#1 "), std::string::npos) << text;
}

// `dripctl diagnose` with `options` on `snapshot` written as the agent writes it.
absl::Status DiagnoseFile(const HeapSnapshot& snapshot, DiagnoseOptions options,
                          std::ostringstream* out) {
  options.input = WriteTemp("snapshot.json", HeapSnapshotToJson(snapshot));
  absl::Status status = RunDiagnoseCommand(options, *out);
  ::unlink(options.input.c_str());
  return status;
}

TEST(DiagnoseCommandTest, ReadsTheFileTheAgentWrites) {
  DiagnoseOptions options;
  options.json = true;
  std::ostringstream out;
  absl::Status status = DiagnoseFile(LeakySnapshot(), options, &out);
  ASSERT_TRUE(status.ok()) << status;
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["stacks"][0]["verdict"], "leak");
}

TEST(DiagnoseCommandTest, MissingFileIsOneLineNamingIt) {
  auto snapshot = ReadSnapshotFile("/nonexistent/snapshot.json");
  ASSERT_FALSE(snapshot.ok());
  EXPECT_EQ(snapshot.status().message(),
            "/nonexistent/snapshot.json: cannot open: No such file or directory");
  EXPECT_EQ(ExitCodeFor(snapshot.status()), kExitUsage);
  auto dir = ReadSnapshotFile("/");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().message(), "/: is a directory");
}

TEST(DiagnoseCommandTest, BadSnapshotNamesFileAndField) {
  nlohmann::json j = nlohmann::json::parse(HeapSnapshotToJson(LeakySnapshot()));
  j["stacks"][1]["series"][3]["live_bytes"] = "lots";
  const std::string path = WriteTemp("bad.json", j.dump());
  DiagnoseOptions options;
  options.input = path;
  std::ostringstream out;
  absl::Status status = RunDiagnoseCommand(options, out);
  ::unlink(path.c_str());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), path + ": stacks[1].series[3].live_bytes: expected an integer");
  EXPECT_EQ(ExitCodeFor(status), kExitUsage);
  EXPECT_TRUE(out.str().empty());
}

TEST(DiagnoseCommandTest, ConfigChangesThresholdsAndRejectsUnknownKeys) {
  const std::string strict = WriteTemp("strict.yaml", "min_sampled_allocs: 100000\n");
  const std::string path = WriteTemp("snapshot.json", HeapSnapshotToJson(LeakySnapshot()));
  DiagnoseOptions options;
  options.input = path;
  options.config_path = strict;
  std::ostringstream out;
  absl::Status status = RunDiagnoseCommand(options, out);
  EXPECT_TRUE(status.ok()) << status;
  // The leak no longer has the samples it needs: undecided, not "no leak".
  EXPECT_NE(out.str().find("\ninconclusive"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("no leak found"), std::string::npos) << out.str();

  const std::string typo = WriteTemp("typo.yaml", "min_sampled_alocs: 3\n");
  options.config_path = typo;
  status = RunDiagnoseCommand(options, out);
  EXPECT_EQ(ExitCodeFor(status), kExitUsage);
  EXPECT_NE(std::string(status.message()).find("min_sampled_alocs"), std::string::npos) << status;
  for (const std::string& p : {strict, path, typo}) ::unlink(p.c_str());
}

// What an engineer does with the export: go tool pprof, Debian's golang-go, reads it; the
// stacks Drip calls leaks (the verdict label) put the leaking function on top, with the
// in-use bytes the diagnosis estimated (a cache holds more here, and is not a leak).
TEST(DiagnoseCommandTest, PprofExportIsReadByGoToolPprofWithTheLeakOnTop) {
  const HeapSnapshot snapshot = LeakySnapshot();
  const std::string profile =
      ::testing::TempDir() + "heap." + std::to_string(::getpid()) + ".pb.gz";
  DiagnoseOptions options;
  options.pprof_path = profile;
  std::ostringstream out;
  absl::Status status = DiagnoseFile(snapshot, options, &out);
  ASSERT_TRUE(status.ok()) << status;
  // -unit=B: bytes as they are; the first row is the largest in-use site of the leaks.
  const GoPprofTop top = RunGoPprofTop("-tagfocus=verdict=leak " + profile);
  ::unlink(profile.c_str());
  ASSERT_EQ(top.exit_status, 0) << "go tool pprof (package golang-go) failed:\n" << top.text;
  EXPECT_NE(top.text.find("Type: inuse_space"), std::string::npos) << top.text;
  EXPECT_NE(top.first_row.find("Session::Remember"), std::string::npos) << top.text;
  const diagnoser::Diagnosis diagnosis = diagnoser::HeapDiagnoser().Diagnose(snapshot);
  ASSERT_EQ(diagnosis.stacks[0].verdict, diagnoser::Verdict::kLeak);
  EXPECT_EQ(top.first_row_bytes, diagnosis.stacks[0].live_bytes) << top.text;
}

TEST(DiagnoseCommandTest, APprofPathThatCannotBeWrittenIsOneLineBeforeAnyWork) {
  DiagnoseOptions options;
  options.input = "/nonexistent/snapshot.json";
  options.pprof_path = "/nonexistent/dir/heap.pb.gz";
  std::ostringstream out;
  absl::Status status = RunDiagnoseCommand(options, out);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("--pprof: /nonexistent/dir/heap.pb.gz", 0), 0u)
      << status.message();
  EXPECT_EQ(status.message().find('\n'), std::string::npos);
  EXPECT_EQ(ExitCodeFor(status), kExitUsage);
  EXPECT_TRUE(out.str().empty());
}

// Two snapshots of one process six hours apart, as files: the first sees the cache fill
// and level off, the second sees it full, replacing its entries; the leak runs throughout.
struct SnapshotPair {
  HeapSnapshot base = LeakySnapshot(true, 1'700'000'000'000);
  HeapSnapshot now = LeakySnapshot(true, 1'700'000'000'000 + 6 * kHourMs, -6 * 3600);
  std::string base_path = WriteTemp("base.json", HeapSnapshotToJson(base));
  std::string now_path = WriteTemp("now.json", HeapSnapshotToJson(now));
  ~SnapshotPair() {
    ::unlink(base_path.c_str());
    ::unlink(now_path.c_str());
  }
  DiagnoseOptions Options() const {
    DiagnoseOptions options;
    options.input = now_path;
    options.base = base_path;
    return options;
  }
};

TEST(DiagnoseCommandTest, BaseShowsTheLeakAsWhatGrewAndTheLevelledCacheAsNoGrowth) {
  const SnapshotPair pair;
  std::ostringstream text;
  absl::Status status = RunDiagnoseCommand(pair.Options(), text);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_NE(text.str().find("In the 6.0 h between the snapshots, Session::Remember"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("#1 added about"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("  #0  Session::Remember(Request const&) (session.cc:88)"),
            std::string::npos)
      << text.str();

  DiagnoseOptions json_options = pair.Options();
  json_options.json = true;
  std::ostringstream json;
  status = RunDiagnoseCommand(json_options, json);
  ASSERT_TRUE(status.ok()) << status;
  const nlohmann::json j = nlohmann::json::parse(json.str());
  ASSERT_GE(j["sites"].size(), 2u);
  EXPECT_EQ(j["sites"][0]["frames"][0]["function"], "Session::Remember(Request const&)");
  EXPECT_EQ(j["sites"][0]["new"]["verdict"], "leak");
  // 72 MB/h for 6 h, within each window's sampling noise.
  EXPECT_NEAR(j["sites"][0]["grew_bytes"].get<double>(), 432e6, 0.25 * 432e6);
  bool cache_seen = false;
  for (const nlohmann::json& site : j["sites"]) {
    if (site["frames"][0]["function"] != "LruCache::Insert(Key const&, Value)") continue;
    cache_seen = true;
    EXPECT_EQ(site["grew_bytes"].get<double>(), 0) << site.dump();
    EXPECT_NE(site["new"]["verdict"], "leak");
  }
  EXPECT_TRUE(cache_seen) << j.dump();
  EXPECT_EQ(j["base_snapshot"]["target"]["pid"], 4242);
}

// The diff as a pprof profile: go tool pprof puts the leak on top with what it added. And
// pprof's own -diff_base of two plain exports works on Drip's profiles: a leak that began
// between the two windows is what the newer one has more of.
TEST(DiagnoseCommandTest, BasePprofIsReadByGoToolPprofAndDiffBaseOfTwoExportsShowsANewLeak) {
  const SnapshotPair pair;
  const std::string diff_profile =
      ::testing::TempDir() + "diff." + std::to_string(::getpid()) + ".pb.gz";
  DiagnoseOptions options = pair.Options();
  options.pprof_path = diff_profile;
  options.json = true;
  std::ostringstream json;
  absl::Status status = RunDiagnoseCommand(options, json);
  ASSERT_TRUE(status.ok()) << status;
  const nlohmann::json j = nlohmann::json::parse(json.str());
  GoPprofTop top = RunGoPprofTop(diff_profile);
  ::unlink(diff_profile.c_str());
  ASSERT_EQ(top.exit_status, 0) << "go tool pprof (package golang-go) failed:\n" << top.text;
  EXPECT_NE(top.first_row.find("Session::Remember"), std::string::npos) << top.text;
  EXPECT_EQ(top.first_row_bytes, std::llround(j["sites"][0]["grew_bytes"].get<double>()))
      << top.text;

  const std::string before =
      ::testing::TempDir() + "before." + std::to_string(::getpid()) + ".pb.gz";
  const std::string after = ::testing::TempDir() + "after." + std::to_string(::getpid()) + ".pb.gz";
  DiagnoseOptions export_before;
  export_before.pprof_path = before;
  std::ostringstream ignored;
  ASSERT_TRUE(DiagnoseFile(LeakySnapshot(false, 1'700'000'000'000), export_before, &ignored).ok());
  DiagnoseOptions export_after;
  export_after.pprof_path = after;
  ASSERT_TRUE(
      DiagnoseFile(LeakySnapshot(true, 1'700'000'000'000 + kHourMs), export_after, &ignored).ok());
  top = RunGoPprofTop("-diff_base=" + before + " " + after);
  ::unlink(before.c_str());
  ::unlink(after.c_str());
  ASSERT_EQ(top.exit_status, 0) << top.text;
  EXPECT_NE(top.first_row.find("Session::Remember"), std::string::npos) << top.text;
}

TEST(DiagnoseCommandTest, BaseOfAnotherProcessIsOneLineNamingBothFiles) {
  SnapshotPair pair;
  pair.base.target.pid = 777;
  std::ofstream(pair.base_path) << HeapSnapshotToJson(pair.base);
  std::ostringstream out;
  absl::Status status = RunDiagnoseCommand(pair.Options(), out);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind(pair.now_path + " against --base " + pair.base_path +
                                       ": not one process: the base is of pid 777 (app), the new "
                                       "snapshot of pid 4242 (app)",
                                   0),
            0u)
      << status.message();
  EXPECT_EQ(status.message().find('\n'), std::string::npos);
  EXPECT_EQ(ExitCodeFor(status), kExitUsage);
  EXPECT_TRUE(out.str().empty());

  DiagnoseOptions swapped = pair.Options();
  std::swap(swapped.input, swapped.base);
  pair.base.target.pid = 4242;
  std::ofstream(pair.base_path) << HeapSnapshotToJson(pair.base);
  status = RunDiagnoseCommand(swapped, out);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("give the earlier snapshot as the base"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace drip::cli
