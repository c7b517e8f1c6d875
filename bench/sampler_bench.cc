// Sampler benchmark: what one sampling pass costs with the BPF task iterator and with
// /proc parsing, side by side in one run, for 50, 500 and 2000 live processes (spawned
// and reaped by the benchmark), then what the real drip-agent costs per hour at a 10 s
// interval with 2000 processes, streaming to a real collector, with each sampler.
//
//   sampler_bench [--processes 50,500,2000] [--passes 30] [--agent-seconds 40]
//
// Pass costs are medians of interleaved passes (BPF, /proc, BPF, ...) so that machine
// noise hits both alike; the ratio is the figure to compare. Agent cost is CPU seconds
// (utime + stime from /proc/PID/stat) over the measured passes, scaled to 360 passes an
// hour, and peak RSS (VmHWM). Recorded in docs/benchmarks.md.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "agent/bpf_sampler.h"
#include "agent/instance_version_reader.h"
#include "agent/proc_files.h"
#include "agent/proc_sampler.h"
#include "common/base/clock.h"
#include "common/base/strings.h"
#include "fmt/format.h"
#include "tests/integration/local_drip.h"

namespace {

using Clock = std::chrono::steady_clock;

// N idle child processes, each with its own mm (forked copies of this one), killed and
// reaped on destruction.
class IdleProcesses {
 public:
  explicit IdleProcesses(int n) {
    for (int i = 0; i < n; ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;) pause();
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~IdleProcesses() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }
  size_t size() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

template <typename F>
double TimeUs(F&& f) {
  const auto start = Clock::now();
  f();
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

struct ProcessCost {
  double cpu_seconds = 0;
  uint64_t peak_rss_bytes = 0;
};

ProcessCost CostOf(pid_t pid) {
  ProcessCost cost;
  std::string text;
  if (drip::agent::ReadProcFile(fmt::format("/proc/{}/stat", pid), &text).ok()) {
    auto stat = drip::agent::ParseProcStat(text);
    if (stat.ok()) {
      cost.cpu_seconds = static_cast<double>(stat->utime_ticks + stat->stime_ticks) /
                         static_cast<double>(sysconf(_SC_CLK_TCK));
    }
  }
  if (drip::agent::ReadProcFile(fmt::format("/proc/{}/status", pid), &text).ok()) {
    size_t at = text.find("VmHWM:");
    if (at != std::string::npos)
      cost.peak_rss_bytes = std::strtoull(&text[at + 6], nullptr, 10) * 1024;
  }
  return cost;
}

struct VersionCost {
  size_t samples = 0;
  size_t instances = 0;  // with a version read in the first pass
  double all_new_us = 0;
  double none_new_us = 0;
  double bpf_us = 0;
};

VersionCost BenchVersions(drip::agent::Sampler& sampler, int passes) {
  VersionCost cost;
  std::vector<double> all_new, none_new, bpf;
  for (int i = 0; i < passes; ++i) {
    std::vector<drip::v1::Sample> samples;
    bpf.push_back(TimeUs([&] { samples = *sampler.SampleOnce(); }));
    drip::agent::InstanceVersionReader reader("/proc");
    all_new.push_back(TimeUs([&] { cost.instances = reader.NewInstances(samples).size(); }));
    none_new.push_back(TimeUs([&] { (void)reader.NewInstances(samples); }));
    cost.samples = samples.size();
  }
  cost.all_new_us = Median(all_new);
  cost.none_new_us = Median(none_new);
  cost.bpf_us = Median(bpf);
  return cost;
}

void BenchPasses(const std::vector<int>& counts, int passes) {
  auto bpf = drip::agent::BpfSampler::Create({}, drip::SystemClock::Get());
  if (!bpf.ok()) {
    std::printf("BPF sampler unavailable: %s\n", std::string(bpf.status().message()).c_str());
    return;
  }
  drip::agent::ProcSampler proc("/proc", drip::SystemClock::Get());
  std::printf("\n== one sampling pass: BPF task iterator vs /proc (median of %d interleaved) ==\n",
              passes);
  std::printf("%10s %10s %12s %12s %12s %12s %8s\n", "spawned", "seen", "bpf_us", "proc_us",
              "bpf_us/proc", "proc_us/proc", "ratio");
  std::vector<VersionCost> versions;
  for (int n : counts) {
    IdleProcesses idle(n);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    size_t seen = 0;
    for (int i = 0; i < 3; ++i) {  // warm caches (dentries, cgroup paths) for both
      seen = (*bpf)->SampleOnce()->size();
      (void)proc.SampleOnce();
    }
    std::vector<double> bpf_us, proc_us;
    for (int i = 0; i < passes; ++i) {
      bpf_us.push_back(TimeUs([&] { (void)(*bpf)->SampleOnce(); }));
      proc_us.push_back(TimeUs([&] { (void)proc.SampleOnce(); }));
    }
    const double b = Median(bpf_us), p = Median(proc_us);
    std::printf("%10zu %10zu %12.0f %12.0f %12.2f %12.2f %7.1fx\n", idle.size(), seen, b, p,
                b / static_cast<double>(seen), p / static_cast<double>(seen), p / b);
    versions.push_back(BenchVersions(**bpf, passes));
    std::fflush(stdout);
  }
  // What the agent adds to a pass for the versions it reports (docs/rollout.md): every
  // instance is new in a fresh reader's first pass (the agent's start, or a host where
  // every process just started); later passes have none new.
  std::printf("\n== versions read per pass, next to the BPF pass (median of %d) ==\n", passes);
  std::printf("%10s %14s %14s %16s %16s\n", "samples", "all_new_us", "us/instance", "none_new_us",
              "none_new/bpf");
  for (const VersionCost& v : versions) {
    std::printf("%10zu %14.0f %14.2f %16.0f %15.1f%%\n", v.samples, v.all_new_us,
                v.all_new_us / static_cast<double>(v.instances), v.none_new_us,
                100 * v.none_new_us / v.bpf_us);
  }
}

void BenchAgent(int processes, int seconds) {
  std::printf(
      "\n== drip-agent with %d extra processes, 1 s interval for %d s, scaled to a 10 s "
      "interval ==\n",
      processes, seconds);
  std::printf("%8s %8s %12s %14s %16s %12s\n", "sampler", "passes", "cpu_s", "cpu_ms/pass",
              "core%@10s", "peak_rss_MB");
  IdleProcesses idle(processes);
  for (const char* sampler : {"bpf", "proc"}) {
    drip::testing::LocalDrip drip;
    if (auto s = drip.StartCollector(); !s.ok()) {
      std::printf("collector: %s\n", std::string(s.message()).c_str());
      return;
    }
    if (auto s =
            drip.StartAgent("bench-host", std::chrono::milliseconds(1000), {"--sampler", sampler});
        !s.ok()) {
      std::printf("agent: %s\n", std::string(s.message()).c_str());
      return;
    }
    // The first passes include start-up (loading BPF, connecting); measure after them.
    std::this_thread::sleep_for(std::chrono::seconds(3));
    const ProcessCost before = CostOf(drip.agent()->pid());
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    const ProcessCost after = CostOf(drip.agent()->pid());
    const double cpu = after.cpu_seconds - before.cpu_seconds;
    const double per_pass = cpu / seconds;
    // 360 passes an hour at 10 s; as a share of one core.
    const double core_percent = per_pass * 360 / 3600 * 100;
    std::printf("%8s %8d %12.2f %14.2f %15.3f%% %12.1f\n", sampler, seconds, cpu, per_pass * 1000,
                core_percent, after.peak_rss_bytes / 1048576.0);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> counts = {50, 500, 2000};
  int passes = 30;
  int agent_seconds = 40;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--processes") {
      counts.clear();
      for (const std::string& c : drip::SplitString(argv[i + 1], ','))
        counts.push_back(std::atoi(c.c_str()));
    } else if (flag == "--passes") {
      passes = std::atoi(argv[i + 1]);
    } else if (flag == "--agent-seconds") {
      agent_seconds = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "sampler_bench: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  std::printf("sampler_bench: %u CPUs, kernel sampled live\n", std::thread::hardware_concurrency());
  BenchPasses(counts, passes);
  if (agent_seconds > 0) BenchAgent(counts.empty() ? 2000 : counts.back(), agent_seconds);
  return 0;
}
