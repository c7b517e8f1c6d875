// The BPF sampler against this kernel: real programs loaded and attached, real child
// processes with known memory. Each test skips, printing the kernel's reason, only when
// the kernel refuses the programs.
#include "agent/bpf_sampler.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "agent/bpf_task_monitor.h"
#include "agent/proc_sampler.h"
#include "common/base/clock.h"
#include "common/base/process_instance.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/integration/child_process.h"
#include "tests/integration/local_drip.h"

namespace drip::testing {
namespace {

using drip::agent::BpfSampler;
using drip::agent::BpfTaskMonitor;
using drip::agent::ProcSampler;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint64_t kMiB = 1024 * 1024;

std::unique_ptr<BpfSampler> CreateOrSkipReason(std::string* reason) {
  absl::StatusOr<std::unique_ptr<BpfSampler>> sampler =
      BpfSampler::Create(BpfSampler::Options{}, SystemClock::Get());
  if (!sampler.ok()) {
    *reason = std::string(sampler.status().message());
    return nullptr;
  }
  return std::move(*sampler);
}

#define CREATE_BPF_SAMPLER_OR_SKIP(var)                               \
  std::string skip_reason;                                            \
  std::unique_ptr<BpfSampler> var = CreateOrSkipReason(&skip_reason); \
  if (!var) GTEST_SKIP() << "the kernel refused the BPF programs: " << skip_reason

std::string TempLog(const std::string& name) {
  return fmt::format("{}/drip-bpf-test-{}-{}.log", ::testing::TempDir(), getpid(), name);
}

// Samples of `pid` (any instance) in one pass.
std::vector<drip::v1::Sample> SamplesOf(const std::vector<drip::v1::Sample>& samples, pid_t pid) {
  std::vector<drip::v1::Sample> out;
  const std::string prefix = fmt::format("{}@", pid);
  for (const auto& s : samples) {
    if (s.instance().starts_with(prefix)) out.push_back(s);
  }
  return out;
}

// Waits until the child printed "ready" (its memory is touched).
void WaitReady(ChildProcess* child) {
  for (int i = 0; i < 300 && child->Log().find("ready") == std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_NE(child->Log().find("ready"), std::string::npos) << child->Log();
}

TEST(BpfSamplerTest, ChildTouching150MBIsSeenWithin5PercentAndItsExitEndsTheInstance) {
  CREATE_BPF_SAMPLER_OR_SKIP(sampler);
  auto child = ChildProcess::Start({TestAllocBinary(), "150"}, TempLog("alloc"));
  ASSERT_TRUE(child.ok()) << child.status();
  WaitReady(child->get());
  const pid_t pid = (*child)->pid();

  auto pass = sampler->SampleOnce();
  ASSERT_TRUE(pass.ok()) << pass.status();
  std::vector<drip::v1::Sample> mine = SamplesOf(*pass, pid);
  ASSERT_EQ(mine.size(), 1u) << "tgid " << pid << " not seen by the task iterator";
  ASSERT_TRUE(mine[0].has_process());
  EXPECT_EQ(mine[0].component(), "proc:drip-test-alloc");
  const double anon = static_cast<double>(mine[0].process().anon_rss_bytes());
  EXPECT_NEAR(anon, 150.0 * kMiB, 0.05 * 150 * kMiB);
  const std::string instance = mine[0].instance();

  (*child)->Signal(SIGKILL);
  ASSERT_TRUE((*child)->Wait(seconds(10)).has_value());
  pass = sampler->SampleOnce();
  ASSERT_TRUE(pass.ok()) << pass.status();
  mine = SamplesOf(*pass, pid);
  ASSERT_EQ(mine.size(), 1u) << "expected exactly the exit of " << instance;
  EXPECT_EQ(mine[0].instance(), instance);
  EXPECT_EQ(mine[0].component(), "proc:drip-test-alloc");
  ASSERT_TRUE(mine[0].has_process_exit());
  EXPECT_EQ(mine[0].process_exit().wait_status(), static_cast<uint32_t>(SIGKILL));
  // The peak RSS covers the 150 MiB it touched.
  EXPECT_GE(mine[0].process_exit().peak_rss_bytes(), 150 * kMiB * 95 / 100);

  // Once ended, the instance is not reported again.
  pass = sampler->SampleOnce();
  ASSERT_TRUE(pass.ok());
  EXPECT_TRUE(SamplesOf(*pass, pid).empty());
}

TEST(BpfSamplerTest, ChildThatForksAndExecsShowsAsANewInstanceAndShortLivedOnesAreReportedOnce) {
  CREATE_BPF_SAMPLER_OR_SKIP(sampler);
  ASSERT_TRUE(sampler->SampleOnce().ok());  // drain whatever happened before

  // sh forks twice: a short-lived drip-test-alloc that exits at once (shorter than any
  // interval) and a long-lived one that we then see in the next pass.
  const std::string script =
      fmt::format("{0} 8 0; {0} 16 & echo child=$!; wait", TestAllocBinary());
  auto shell = ChildProcess::Start({"/bin/sh", "-c", script}, TempLog("fork-exec"));
  ASSERT_TRUE(shell.ok()) << shell.status();
  pid_t grandchild = 0;
  for (int i = 0; i < 300 && grandchild == 0; ++i) {
    std::string log = (*shell)->Log();
    size_t at = log.find("child=");
    size_t end = log.find('\n', at);
    if (at != std::string::npos && end != std::string::npos &&
        log.find("ready", end) != std::string::npos) {
      grandchild = std::stoi(log.substr(at + 6, end - at - 6));
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_NE(grandchild, 0) << (*shell)->Log();

  auto pass = sampler->SampleOnce();
  ASSERT_TRUE(pass.ok()) << pass.status();
  std::vector<drip::v1::Sample> shell_samples = SamplesOf(*pass, (*shell)->pid());
  std::vector<drip::v1::Sample> child_samples = SamplesOf(*pass, grandchild);
  ASSERT_EQ(child_samples.size(), 1u);
  ASSERT_TRUE(child_samples[0].has_process());
  EXPECT_EQ(child_samples[0].component(), "proc:drip-test-alloc");
  EXPECT_NEAR(static_cast<double>(child_samples[0].process().anon_rss_bytes()), 16.0 * kMiB,
              0.05 * 16 * kMiB);
  ASSERT_EQ(shell_samples.size(), 1u);
  EXPECT_NE(shell_samples[0].instance(), child_samples[0].instance());
  // Started as /bin/sh, a link to dash on Debian: it runs under the name it was started
  // by, as ps shows it (ComponentNamer::ProgramName).
  EXPECT_EQ(shell_samples[0].component(), "proc:sh");

  // The short-lived child: exactly one sample, its exit, named by its executable. The
  // agent sees the whole host, where other tests' children come and go too: the shell
  // forked this one between its own start and the long-lived child's.
  int short_lived = 0;
  for (const auto& s : *pass) {
    const int pid = drip::PidOfInstance(s.instance());
    if (s.has_process_exit() && s.component() == "proc:drip-test-alloc" && pid > (*shell)->pid() &&
        pid < grandchild) {
      ++short_lived;
      EXPECT_GE(s.process_exit().peak_rss_bytes(), 8 * kMiB * 95 / 100);
      EXPECT_EQ(s.process_exit().wait_status(), 0u);
    }
  }
  EXPECT_EQ(short_lived, 1);
}

TEST(BpfSamplerTest, BpfAndProcSamplersAgreeWithin5PercentOnAnonForEveryProcess) {
  CREATE_BPF_SAMPLER_OR_SKIP(bpf);
  ProcSampler proc("/proc", SystemClock::Get());
  // Processes with a known, stable footprint, so that the comparison covers real sizes
  // next to whatever else runs on the host.
  auto a = ChildProcess::Start({TestAllocBinary(), "40"}, TempLog("agree-a"));
  auto b = ChildProcess::Start({TestAllocBinary(), "90"}, TempLog("agree-b"));
  ASSERT_TRUE(a.ok() && b.ok());
  WaitReady(a->get());
  WaitReady(b->get());

  auto first = bpf->SampleOnce();
  auto second = proc.SampleOnce();
  auto third = bpf->SampleOnce();  // only processes that lived through all three count
  ASSERT_TRUE(first.ok() && second.ok() && third.ok());
  auto by_instance = [](const std::vector<drip::v1::Sample>& samples) {
    std::map<std::string, drip::v1::Sample> m;
    for (const auto& s : samples) {
      if (s.has_process()) m[s.instance()] = s;
    }
    return m;
  };
  auto bpf_first = by_instance(*first);
  auto bpf_third = by_instance(*third);
  auto from_proc = by_instance(*second);
  int compared = 0;
  for (const auto& [instance, p] : from_proc) {
    auto f = bpf_first.find(instance);
    auto t = bpf_third.find(instance);
    if (f == bpf_first.end() || t == bpf_third.end()) continue;
    ++compared;
    EXPECT_EQ(f->second.component(), p.component()) << instance;
    const double proc_anon = static_cast<double>(p.process().anon_rss_bytes());
    // A busy process may change between the passes: the /proc figure must lie within 5%
    // (or a few pages for tiny processes) of the BPF figures around it.
    const double lo =
        std::min(f->second.process().anon_rss_bytes(), t->second.process().anon_rss_bytes());
    const double hi =
        std::max(f->second.process().anon_rss_bytes(), t->second.process().anon_rss_bytes());
    const double slack = std::max(0.05 * proc_anon, 256.0 * 1024);
    EXPECT_GE(proc_anon, lo - slack) << instance << " " << p.component();
    EXPECT_LE(proc_anon, hi + slack) << instance << " " << p.component();
  }
  EXPECT_GE(compared, 3);
  for (pid_t pid : {(*a)->pid(), (*b)->pid()}) {
    EXPECT_EQ(SamplesOf(*second, pid).size(), 1u) << pid;
    EXPECT_EQ(SamplesOf(*first, pid).size(), 1u) << pid;
  }
}

TEST(BpfSamplerTest, ObjectBuiltAgainstTheFallbackVmlinuxHeaderLoadsIntoThisKernel) {
  CREATE_BPF_SAMPLER_OR_SKIP(sampler);  // only meaningful where the real one loads
  absl::Status loaded = BpfTaskMonitor::CheckObjectLoads(DRIP_BPF_FALLBACK_OBJECT);
  EXPECT_TRUE(loaded.ok()) << loaded;
}

}  // namespace
}  // namespace drip::testing
