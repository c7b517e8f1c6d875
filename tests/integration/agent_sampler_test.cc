// The agent's sampler choice end to end: real collector, real agent, dripctl. By default
// the agent runs BPF and reports process exits; forced to /proc it still streams and
// says which sampler it runs — in its ready file, to the collector (dripctl hosts) and
// on its own metrics.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/child_process.h"
#include "tests/integration/http_get.h"
#include "tests/integration/local_drip.h"

namespace drip::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The sampler dripctl hosts lists for `host`.
std::string SamplerOfHost(LocalDrip& drip, const std::string& host) {
  CommandOutput hosts = drip.Dripctl({"hosts", "--json"});
  EXPECT_EQ(hosts.exit_code, 0) << hosts.err;
  const nlohmann::json listed = nlohmann::json::parse(hosts.out);
  for (const auto& h : listed["hosts"]) {
    if (h["host"] == host) return h["sampler"].get<std::string>();
  }
  ADD_FAILURE() << "host " << host << " not listed: " << hosts.out;
  return "";
}

// Samples stored for the instance of `pid` under `component`, once at least `min` exist.
nlohmann::json WaitForSamples(LocalDrip& drip, const std::string& host,
                              const std::string& component, pid_t pid,
                              const std::function<bool(const nlohmann::json&)>& done) {
  const std::string prefix = fmt::format("{}@", pid);
  nlohmann::json samples = nlohmann::json::array();
  for (int attempt = 0; attempt < 40; ++attempt) {
    auto series = drip.Series(host, component);
    if (series.ok()) {
      for (const auto& s : (*series)["series"]) {
        if (s["instance"].get<std::string>().starts_with(prefix)) samples = s["samples"];
      }
    }
    if (done(samples)) break;
    std::this_thread::sleep_for(milliseconds(250));
  }
  return samples;
}

void WaitReady(ChildProcess* child) {
  for (int i = 0; i < 300 && child->Log().find("ready") == std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(20));
  }
}

TEST(AgentSamplerTest, AgentForcedToTheProcSamplerStillStreamsAndSaysSo) {
  LocalDrip drip;
  ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  const std::string host = fmt::format("it-proc-{}", getpid());
  ASSERT_TRUE(drip.StartAgent(host, milliseconds(500), {"--sampler", "proc"}).ok()) << drip.Logs();
  EXPECT_EQ(drip.agent_sampler(), "proc");

  auto child = ChildProcess::Start({TestAllocBinary(), "32"}, drip.dir().File("alloc.log"));
  ASSERT_TRUE(child.ok());
  WaitReady(child->get());
  // A pass may have read the child while it was still touching its pages (a loaded CI
  // machine caught it at 5 MiB): wait for a sample with the whole 32 MiB, up to 10 s.
  nlohmann::json samples = WaitForSamples(
      drip, host, "proc:drip-test-alloc", (*child)->pid(), [](const nlohmann::json& s) {
        return !s.empty() && s.back()["anon_rss_bytes"].get<double>() >= 0.95 * 32 * (1 << 20);
      });
  ASSERT_FALSE(samples.empty()) << drip.Logs();
  EXPECT_NEAR(samples.back()["anon_rss_bytes"].get<double>(), 32.0 * (1 << 20),
              0.05 * 32 * (1 << 20));

  EXPECT_EQ(SamplerOfHost(drip, host), "proc");
  auto metrics = HttpGet(drip.agent_metrics_address(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "drip_agent_sampler_info{").value_or(0), 1);
  EXPECT_NE(metrics->find("sampler=\"proc\""), std::string::npos) << *metrics;
  EXPECT_EQ(MetricValue(*metrics, "drip_agent_sampler_fallback").value_or(-1), 0)
      << "forced, not a fallback";
  EXPECT_GT(MetricValue(*metrics, "drip_agent_entities{kind=\"process\"}").value_or(0), 0);
}

TEST(AgentSamplerTest, AgentRunsBpfByDefaultReportsExitsAndExportsItsOwnCost) {
  LocalDrip drip;
  ASSERT_TRUE(drip.StartCollector().ok()) << drip.Logs();
  const std::string host = fmt::format("it-bpf-{}", getpid());
  ASSERT_TRUE(drip.StartAgent(host, milliseconds(500)).ok()) << drip.Logs();
  auto metrics = HttpGet(drip.agent_metrics_address(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  if (drip.agent_sampler() != "bpf") {
    // Only a kernel refusal may get here; the agent must then say so.
    EXPECT_EQ(MetricValue(*metrics, "drip_agent_sampler_fallback").value_or(0), 1);
    GTEST_SKIP() << "the kernel refused the BPF programs; agent log:\n" << drip.Logs();
  }
  EXPECT_EQ(MetricValue(*metrics, "drip_agent_sampler_fallback").value_or(-1), 0);

  auto child = ChildProcess::Start({TestAllocBinary(), "24"}, drip.dir().File("alloc.log"));
  ASSERT_TRUE(child.ok());
  WaitReady(child->get());
  const pid_t pid = (*child)->pid();
  nlohmann::json samples = WaitForSamples(drip, host, "proc:drip-test-alloc", pid,
                                          [](const nlohmann::json& s) { return !s.empty(); });
  ASSERT_FALSE(samples.empty()) << drip.Logs();
  (*child)->Signal(SIGKILL);
  ASSERT_TRUE((*child)->Wait(seconds(10)).has_value());
  samples = WaitForSamples(drip, host, "proc:drip-test-alloc", pid, [](const nlohmann::json& s) {
    return !s.empty() && s.back().value("exited", false);
  });
  ASSERT_FALSE(samples.empty());
  EXPECT_TRUE(samples.back().value("exited", false)) << samples.dump();
  EXPECT_EQ(samples.back()["kind"], "exit");
  EXPECT_EQ(samples.back()["wait_status"], SIGKILL);

  EXPECT_EQ(SamplerOfHost(drip, host), "bpf");
  metrics = HttpGet(drip.agent_metrics_address(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_GT(MetricValue(*metrics, "drip_agent_cpu_seconds_total").value_or(0), 0);
  EXPECT_GT(MetricValue(*metrics, "drip_agent_resident_memory_bytes").value_or(0), 1 << 20);
  EXPECT_GT(MetricValue(*metrics, "drip_agent_pass_duration_seconds_count").value_or(0), 0);
  EXPECT_GT(MetricValue(*metrics, "drip_agent_entities{kind=\"process\"}").value_or(0), 0);
  EXPECT_GE(MetricValue(*metrics, "drip_agent_process_exits_total").value_or(0), 1);
  EXPECT_EQ(MetricValue(*metrics, "drip_agent_process_events_lost_total").value_or(-1), 0);
}

}  // namespace
}  // namespace drip::testing
