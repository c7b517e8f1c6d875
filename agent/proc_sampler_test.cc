#include "agent/proc_sampler.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <optional>

#include "agent/proc_files.h"
#include "agent/testing/fake_proc_tree.h"
#include "common/base/strings.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

using testing::FakeProcTree;

constexpr int64_t kNowMs = 1'700'000'500'000;

std::map<std::string, drip::v1::Sample> ByInstance(const std::vector<drip::v1::Sample>& samples) {
  std::map<std::string, drip::v1::Sample> out;
  for (const auto& s : samples) out[s.instance()] = s;
  return out;
}

int64_t TicksPerSecond() { return sysconf(_SC_CLK_TCK); }

TEST(ProcSamplerTest, ReadsEveryProcessOfAFakeTree) {
  FakeProcTree tree;
  const int64_t hz = TicksPerSecond();
  tree.AddProcess({.pid = 100,
                   .comm = "nginx",
                   .start_ticks = static_cast<uint64_t>(250 * hz),
                   .anon_kb = 2048,
                   .file_kb = 512,
                   .shmem_kb = 64,
                   .swap_kb = 8,
                   .cgroup = "0::/system.slice/nginx.service\n",
                   .exe = "/usr/sbin/nginx"});
  tree.AddProcess({.pid = 200,
                   .comm = "my (odd) proc) name",
                   .start_ticks = static_cast<uint64_t>(1000 * hz + hz / 2),
                   .anon_kb = 100,
                   .cgroup = "0::/user.slice/user-1000.slice/session-2.scope\n"});
  FakeClock clock(kNowMs);
  ProcSampler sampler(tree.root(), &clock);

  auto samples = sampler.SampleOnce();
  ASSERT_TRUE(samples.ok()) << samples.status();
  auto by_instance = ByInstance(*samples);
  ASSERT_EQ(by_instance.size(), 2u);

  const std::string nginx_instance = fmt::format("100@{}", FakeProcTree::kBootTime + 250);
  ASSERT_TRUE(by_instance.contains(nginx_instance));
  const drip::v1::Sample& nginx = by_instance[nginx_instance];
  EXPECT_EQ(nginx.component(), "svc:nginx.service");
  EXPECT_EQ(nginx.timestamp_ms(), kNowMs);
  EXPECT_TRUE(nginx.host().empty());
  EXPECT_EQ(nginx.process().anon_rss_bytes(), 2048u * 1024);
  EXPECT_EQ(nginx.process().file_rss_bytes(), 512u * 1024);
  EXPECT_EQ(nginx.process().shmem_rss_bytes(), 64u * 1024);
  EXPECT_EQ(nginx.process().swap_bytes(), 8u * 1024);

  // Start times are whole seconds: the half second is cut.
  const std::string odd_instance = fmt::format("200@{}", FakeProcTree::kBootTime + 1000);
  ASSERT_TRUE(by_instance.contains(odd_instance));
  // No exe link: named by comm, parsed up to the last ')'.
  EXPECT_EQ(by_instance[odd_instance].component(), "proc:my (odd) proc) name");
  EXPECT_EQ(sampler.last_pass().sampled, 2u);
  EXPECT_EQ(sampler.last_pass().errors, 0u);
}

TEST(ProcSamplerTest, KernelThreadsAndZombiesAreSkippedWithoutError) {
  FakeProcTree tree;
  tree.AddProcess({.pid = 2, .comm = "kthreadd", .anon_kb = std::nullopt});
  tree.AddProcess({.pid = 3, .comm = "defunct", .state = 'Z', .anon_kb = std::nullopt});
  tree.AddProcess({.pid = 10, .comm = "bash", .anon_kb = 300});
  FakeClock clock(kNowMs);
  ProcSampler sampler(tree.root(), &clock);

  auto samples = sampler.SampleOnce();
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ((*samples)[0].component(), "proc:bash");
  EXPECT_EQ(sampler.last_pass().no_mm, 2u);
  EXPECT_EQ(sampler.last_pass().errors, 0u);
}

TEST(ProcSamplerTest, ProcessThatVanishedMidReadIsSkippedSilently) {
  FakeProcTree tree;
  tree.AddProcess({.pid = 10, .comm = "bash", .anon_kb = 300});
  // Listed, but its files are gone: it exited between readdir and open.
  tree.MakeDir("999");
  // Exited between reading status and stat.
  tree.WriteFile("998/status", "Name:\tshort\nRssAnon:\t10 kB\n");
  FakeClock clock(kNowMs);
  ProcSampler sampler(tree.root(), &clock);

  auto samples = sampler.SampleOnce();
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->size(), 1u);
  EXPECT_EQ(sampler.last_pass().vanished, 2u);
  EXPECT_EQ(sampler.last_pass().errors, 0u);
  EXPECT_EQ(sampler.errors_total(), 0u);
}

TEST(ProcSamplerTest, UnparsableProcessIsSkippedAndCounted) {
  FakeProcTree tree;
  tree.AddProcess({.pid = 10, .comm = "bash", .anon_kb = 300});
  tree.AddProcess({.pid = 11, .comm = "broken", .anon_kb = 300});
  tree.WriteFile("11/stat", "11 (broken) S 1 2\n");
  FakeClock clock(kNowMs);
  ProcSampler sampler(tree.root(), &clock);

  auto samples = sampler.SampleOnce();
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->size(), 1u);
  EXPECT_EQ(sampler.last_pass().errors, 1u);
  ASSERT_TRUE(sampler.SampleOnce().ok());
  EXPECT_EQ(sampler.errors_total(), 2u);
}

TEST(ProcSamplerTest, ProcessWithoutCgroupPathIsNamedByExecutable) {
  FakeProcTree tree;
  tree.AddProcess(
      {.pid = 10, .comm = "app", .anon_kb = 300, .cgroup = "", .exe = "/opt/app/bin/app"});
  FakeClock clock(kNowMs);
  ProcSampler sampler(tree.root(), &clock);
  auto samples = sampler.SampleOnce();
  ASSERT_TRUE(samples.ok());
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ((*samples)[0].component(), "proc:app");
}

TEST(ProcSamplerTest, MissingProcRootIsAnError) {
  FakeClock clock(kNowMs);
  ProcSampler sampler("/nonexistent-drip-proc", &clock);
  auto samples = sampler.SampleOnce();
  ASSERT_FALSE(samples.ok());
  EXPECT_NE(samples.status().message().find("/nonexistent-drip-proc"), std::string::npos);
}

// The real /proc: this test process is found, with its start time and an anonymous
// RSS that grows by what the test allocates and touches.
TEST(ProcSamplerTest, RealProcFindsOwnProcessAndItsAnonymousMemory) {
  ProcSampler sampler("/proc", SystemClock::Get());
  const std::string prefix = fmt::format("{}@", getpid());
  auto own_anon = [&]() -> std::optional<drip::v1::Sample> {
    auto samples = sampler.SampleOnce();
    if (!samples.ok()) return std::nullopt;
    for (const auto& s : *samples) {
      if (s.instance().rfind(prefix, 0) == 0) return s;
    }
    return std::nullopt;
  };

  std::optional<drip::v1::Sample> before = own_anon();
  ASSERT_TRUE(before.has_value()) << "own process not sampled";
  std::string stat_text;
  ASSERT_TRUE(ReadProcFile("/proc/stat", &stat_text).ok());
  const int64_t btime = *ParseBootTime(stat_text);
  int64_t start_s = 0;
  ASSERT_TRUE(ParseNumber(before->instance().substr(prefix.size()), &start_s));
  EXPECT_GE(start_s, btime);
  EXPECT_LE(start_s, SystemClock::Get()->NowMs() / 1000 + 1);
  EXPECT_EQ(before->component().rfind("proc:", 0) == 0 || before->component().rfind("svc:", 0) == 0,
            true)
      << before->component();

  constexpr size_t kBytes = 50u << 20;
  void* block = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  std::memset(block, 0x5a, kBytes);  // non-zero so every page is private and resident
  std::optional<drip::v1::Sample> after = own_anon();
  munmap(block, kBytes);
  ASSERT_TRUE(after.has_value());

  const double grown = static_cast<double>(after->process().anon_rss_bytes()) -
                       static_cast<double>(before->process().anon_rss_bytes());
  // A pass allocates and frees memory of its own. Normally that is reused, but under
  // AddressSanitizer freed blocks sit in its quarantine (up to 256 MB), so a pass can grow
  // the process by tens of MB: there only the lower bound is exact.
#if defined(__SANITIZE_ADDRESS__)
  constexpr double kOwnGrowth = 64.0 * (1 << 20);
#else
  constexpr double kOwnGrowth = 0;
#endif
  EXPECT_GE(grown, 0.95 * kBytes);
  EXPECT_LE(grown, 1.05 * kBytes + kOwnGrowth)
      << "anon before " << before->process().anon_rss_bytes() << ", after "
      << after->process().anon_rss_bytes();
}

}  // namespace
}  // namespace drip::agent
