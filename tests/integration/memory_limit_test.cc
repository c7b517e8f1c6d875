// A leak into a memory limit, end to end on this kernel: a real process in a real memory
// cgroup with a limit (the v1 controller this machine and CI run; v2 where the host runs
// that), leaking until the kernel's OOM killer ends it, watched by a real agent and a
// real collector whose detector judges seconds as the demo's does. The leak is flagged
// before the kill, with the cgroup's limit as what runs out; the limit and the kill are
// stored and shown (dripctl series, dripctl suspects, Prometheus).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/http_get.h"
#include "tests/integration/local_drip.h"

namespace drip::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kLimit = 96ull << 20;

bool WriteTo(const fs::path& file, const std::string& text) {
  std::ofstream out(file);
  out << text << std::flush;
  return static_cast<bool>(out);
}

// A memory cgroup of this test's own with a 96 MiB limit and no swap, in whichever
// hierarchy has the memory controller; removed (once empty) by the destructor.
class LimitedCgroup {
 public:
  // Empty when it cannot be made here, with the reason in *why.
  static std::unique_ptr<LimitedCgroup> Make(std::string* why) {
    if (geteuid() != 0) {
      *why = "needs root to make a memory cgroup";
      return nullptr;
    }
    const std::string name = fmt::format("drip-limit-it-{}", getpid());
    const fs::path v1 = "/sys/fs/cgroup/memory";
    if (fs::exists(v1 / "memory.limit_in_bytes")) {
      auto cgroup = std::unique_ptr<LimitedCgroup>(new LimitedCgroup(v1 / name));
      if (!fs::create_directory(cgroup->dir_) ||
          !WriteTo(cgroup->dir_ / "memory.limit_in_bytes", std::to_string(kLimit))) {
        *why = fmt::format("cannot make {} with a limit", cgroup->dir_.string());
        return nullptr;
      }
      if (fs::exists(cgroup->dir_ / "memory.memsw.limit_in_bytes")) {
        WriteTo(cgroup->dir_ / "memory.memsw.limit_in_bytes", std::to_string(kLimit));
      }
      return cgroup;
    }
    for (const fs::path v2 : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
      if (!fs::exists(v2 / "cgroup.subtree_control")) continue;
      WriteTo(v2 / "cgroup.subtree_control", "+memory");  // may be on already
      auto cgroup = std::unique_ptr<LimitedCgroup>(new LimitedCgroup(v2 / name));
      if (fs::create_directory(cgroup->dir_) && fs::exists(cgroup->dir_ / "memory.max") &&
          WriteTo(cgroup->dir_ / "memory.max", std::to_string(kLimit))) {
        WriteTo(cgroup->dir_ / "memory.swap.max", "0");
        return cgroup;
      }
    }
    *why = "no cgroup hierarchy here has the memory controller";
    return nullptr;
  }
  ~LimitedCgroup() {
    std::error_code ec;
    fs::remove(dir_, ec);
  }
  const fs::path& dir() const { return dir_; }

 private:
  explicit LimitedCgroup(fs::path dir) : dir_(std::move(dir)) {}
  fs::path dir_;
};

TEST(MemoryLimitTest, ALeakIntoItsCgroupLimitIsFlaggedBeforeTheKernelKillsItAndTheKillIsShown) {
  std::string why;
  std::unique_ptr<LimitedCgroup> cgroup = LimitedCgroup::Make(&why);
  if (!cgroup) GTEST_SKIP() << why;

  LocalDrip drip;
  // The demo's scaled detector; no snapshots (this test is about the flag and the kill).
  ASSERT_TRUE(
      drip.StartCollector(std::string(kFastDetectorYaml) + "snapshots:\n  enabled: false\n").ok())
      << drip.Logs();
  const std::string host = fmt::format("it-limit-{}", getpid());
  // The leaking example under a name of its own: its own component, whatever else runs.
  const std::string leaker = drip.dir().File("drip-oom-leaker");
  fs::copy_file(LeakyExampleBinary(), leaker);
  fs::permissions(leaker, fs::perms::owner_all);
  const std::string component = "proc:drip-oom-leaker";
  drip.SetAgentAllowedComponents({component});
  ASSERT_TRUE(drip.StartAgent(host, milliseconds(1000)).ok()) << drip.Logs();

  // About 1 MiB/s from a few MiB: the kernel kills it at 96 MiB some 90 s in.
  const std::string enter =
      fmt::format("echo $$ > {}/cgroup.procs && exec \"$0\" \"$@\"", cgroup->dir().string());
  auto child = ChildProcess::Start(
      {"/bin/sh", "-c", enter, leaker, "--leak-kib-per-s", "1024", "--seconds", "600"},
      drip.dir().File("leaker.log"));
  ASSERT_TRUE(child.ok()) << child.status();

  std::string last;
  const nlohmann::json suspect = WaitForSuspect(drip, host, component, seconds(240), &last);
  const bool alive_when_flagged = (*child)->Running();
  ASSERT_FALSE(suspect.is_null()) << "no suspect for " << component << " in\n"
                                  << last << (*child)->Log() << drip.Logs();
  EXPECT_TRUE(alive_when_flagged) << "flagged only after the kill: " << suspect.dump(2);
  EXPECT_EQ(suspect["limited_by"], "cgroup") << suspect.dump(2);
  EXPECT_EQ(suspect["limit_bytes"], kLimit) << suspect.dump(2);
  ASSERT_TRUE(suspect["eta_to_oom_seconds"].is_number()) << suspect.dump(2);
  EXPECT_LT(suspect["eta_to_oom_seconds"].get<double>(), 300) << suspect.dump(2);

  // The kernel kills it at its limit.
  const std::optional<int> status = (*child)->Wait(seconds(300));
  ASSERT_TRUE(status.has_value()) << "not killed within 5 minutes\n" << (*child)->Log();
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) << "wait status " << *status;
  // What a service manager does next: start it again, in the same cgroup.
  auto again = ChildProcess::Start(
      {"/bin/sh", "-c", enter, leaker, "--leak-kib-per-s", "0", "--seconds", "600"},
      drip.dir().File("leaker-again.log"));
  ASSERT_TRUE(again.ok()) << again.status();

  // Stored and shown: samples carry the limit, the exit says the OOM killer chose it, and
  // the instance after it counts the kill in its cgroup.
  bool limited = false;
  bool oom_exit = false;
  bool counted = false;
  nlohmann::json series;
  for (const auto deadline = Clock::now() + seconds(60); Clock::now() < deadline;) {
    absl::StatusOr<nlohmann::json> read = drip.Series(host, component);
    ASSERT_TRUE(read.ok()) << read.status();
    series = *read;
    for (const auto& s : series["series"]) {
      for (const auto& sample : s["samples"]) {
        if (sample.contains("limit") && sample["limit"]["max_bytes"] == kLimit) limited = true;
        if (sample.value("oom_killed", false)) oom_exit = true;
        if (sample.contains("limit") && sample["limit"]["oom_kills"].get<uint64_t>() >= 1) {
          counted = true;
        }
      }
    }
    if (limited && oom_exit && counted) break;
    std::this_thread::sleep_for(seconds(2));
  }
  EXPECT_TRUE(limited) << series.dump(1).substr(0, 4000);
  EXPECT_TRUE(oom_exit) << "no exit marked oom_killed (the BPF sampler marks them)\n"
                        << drip.agent_sampler();
  EXPECT_TRUE(counted) << series.dump(1).substr(0, 4000);
  const CommandOutput table = drip.Dripctl({"series", "--host", host, "--component", component});
  EXPECT_NE(table.out.find("limit 96.0 MiB"), std::string::npos) << table.out << table.err;

  // The suspect and the metrics say how many kills.
  nlohmann::json killed;
  for (const auto deadline = Clock::now() + seconds(60); Clock::now() < deadline;) {
    killed = WaitForSuspect(drip, host, component, seconds(5), &last);
    if (!killed.is_null() && killed["oom_kills"].get<int>() >= 1) break;
    std::this_thread::sleep_for(seconds(2));
  }
  ASSERT_FALSE(killed.is_null()) << last;
  EXPECT_GE(killed["oom_kills"].get<int>(), 1) << killed.dump(2);
  // The gauge follows at the end of the pipeline's next pass, which a query can beat.
  absl::StatusOr<double> kills;
  for (const auto deadline = Clock::now() + seconds(30); Clock::now() < deadline;) {
    absl::StatusOr<std::string> metrics = HttpGet(drip.metrics_address(), "/metrics");
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    kills = MetricValue(*metrics, "drip_detector_oom_kills");
    ASSERT_TRUE(kills.ok()) << kills.status();
    if (*kills >= 1) break;
    std::this_thread::sleep_for(seconds(1));
  }
  EXPECT_GE(*kills, 1);
  (*again)->Signal(SIGKILL);
  (*again)->Wait(seconds(10));
}

}  // namespace
}  // namespace drip::testing
