#include "agent/agent.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "agent/testing/fake_collector.h"
#include "common/version.h"

namespace drip::agent {
namespace {

using std::chrono::milliseconds;
using testing::FakeCollector;

// Returns `count` samples per pass, or an error while `fail` is set.
class FakeSampler final : public Sampler {
 public:
  // `count` processes, and the system services `units` read from their cgroups.
  explicit FakeSampler(int count, std::vector<std::string> units = {})
      : count_(count), units_(std::move(units)) {}

  absl::StatusOr<std::vector<drip::v1::Sample>> SampleOnce() override {
    const int pass = ++passes_;
    if (fail_) return absl::UnavailableError("fake sampler told to fail");
    std::vector<drip::v1::Sample> samples(count_);
    for (int i = 0; i < count_; ++i) {
      samples[i].set_component("proc:fake");
      samples[i].set_instance(std::to_string(i) + "@1");
      samples[i].set_timestamp_ms(1'700'000'000'000 + pass);
      samples[i].mutable_process()->set_anon_rss_bytes(4096);
    }
    for (const std::string& unit : units_) {
      drip::v1::Sample& sample = samples.emplace_back();
      sample.set_component("svc:" + unit);
      sample.set_instance("cg@7");
      sample.set_timestamp_ms(1'700'000'000'000 + pass);
      sample.mutable_cgroup()->set_current_bytes(1 << 20);
    }
    return samples;
  }
  std::string name() const override { return "fake"; }

  std::atomic<int> passes_{0};
  std::atomic<bool> fail_{false};

 private:
  const int count_;
  const std::vector<std::string> units_;
};

AgentConfig TestConfig(const std::string& collector) {
  AgentConfig config = AgentConfig::Defaults();
  config.host = "agent-test-host";
  config.collector = collector;
  config.tls.plaintext = true;
  config.interval = milliseconds(100);
  config.backoff.initial = milliseconds(20);
  config.backoff.max = milliseconds(200);
  return config;
}

TEST(AgentTest, HelloCarriesHostFactsAndConfiguredLabelsWin) {
  AgentConfig config = TestConfig("127.0.0.1:1");
  config.labels = {{"env", "prod"}, {"os", "custom-os"}};
  HostFacts facts{.kernel = "6.1.0-18-amd64",
                  .os = "Debian GNU/Linux 12 (bookworm)",
                  .arch = "x86_64",
                  .memory_total_bytes = 8ull << 30,
                  .boot_time_ms = 1'700'000'000'000};
  drip::v1::Hello hello = Agent::BuildHello(config, facts);
  EXPECT_EQ(hello.host(), "agent-test-host");
  EXPECT_EQ(hello.labels().at("kernel"), "6.1.0-18-amd64");
  EXPECT_EQ(hello.labels().at("arch"), "x86_64");
  EXPECT_EQ(hello.labels().at("env"), "prod");
  EXPECT_EQ(hello.labels().at("os"), "custom-os");
  EXPECT_EQ(hello.agent_version(), drip::kVersion);
  EXPECT_EQ(hello.memory_total_bytes(), 8ull << 30);
  EXPECT_EQ(hello.boot_time_ms(), 1'700'000'000'000);
}

TEST(AgentTest, RealHostFactsAreReadable) {
  auto facts = HostFacts::Read("/proc");
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_FALSE(facts->kernel.empty());
  EXPECT_FALSE(facts->arch.empty());
  EXPECT_GT(facts->memory_total_bytes, 0u);
  EXPECT_GT(facts->boot_time_ms, 0);
  auto usage = SelfUsage::Read("/proc");
  ASSERT_TRUE(usage.ok()) << usage.status();
  EXPECT_GT(usage->rss_bytes, 0u);
  EXPECT_EQ(ParseOsReleasePrettyName("NAME=x\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"),
            "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(ParseOsReleasePrettyName("NAME=x\n"), "");
}

TEST(AgentTest, APassWithMoreSamplesThanTheBatchLimitIsSplit) {
  AgentConfig config = TestConfig("127.0.0.1:1");
  config.max_samples_per_batch = 10;
  Agent agent(config, std::make_unique<FakeSampler>(25), drip::v1::Hello());
  auto pass = agent.RunOnePass();
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(*pass, 25u);
  std::vector<int> sizes;
  uint64_t after = 0;
  while (auto batch = agent.mutable_buffer()->NextAfter(after)) {
    sizes.push_back(batch->samples_size());
    after = batch->sequence();
  }
  EXPECT_EQ(sizes, (std::vector<int>{10, 10, 5}));
}

TEST(AgentTest, FailedPassBuffersNothing) {
  auto sampler = std::make_unique<FakeSampler>(3);
  sampler->fail_ = true;
  Agent agent(TestConfig("127.0.0.1:1"), std::move(sampler), drip::v1::Hello());
  EXPECT_FALSE(agent.RunOnePass().ok());
  EXPECT_EQ(agent.buffer().stats().buffered_batches, 0u);
}

TEST(AgentTest, StatusReportsSamplerOwnCostAndBuffer) {
  Agent agent(TestConfig("127.0.0.1:1"), std::make_unique<FakeSampler>(3), drip::v1::Hello());
  ASSERT_TRUE(agent.RunOnePass().ok());
  drip::v1::AgentStatus status = agent.CurrentStatus();
  EXPECT_EQ(status.sampler(), "fake");
  EXPECT_EQ(status.buffered_batches(), 1u);
  EXPECT_GT(status.rss_bytes(), 0u);
}

TEST(AgentTest, RunSamplesEveryIntervalAndStreamsUntilStopped) {
  FakeCollector collector({});
  ASSERT_NE(collector.port(), 0);
  auto owned_sampler = std::make_unique<FakeSampler>(4);
  FakeSampler* sampler = owned_sampler.get();
  drip::v1::Hello hello;
  hello.set_host("agent-test-host");
  Agent agent(TestConfig(collector.address()), std::move(owned_sampler), hello);
  std::thread run([&] { agent.Run(); });
  const bool arrived = collector.WaitUntil([&] { return collector.stored_count_locked() >= 3; });
  agent.RequestStop();
  run.join();
  ASSERT_TRUE(arrived);

  std::vector<drip::v1::SampleBatch> stored = collector.stored_batches();
  for (size_t i = 0; i < stored.size(); ++i) {
    EXPECT_EQ(stored[i].sequence(), i + 1);
    EXPECT_EQ(stored[i].samples_size(), 4);
    EXPECT_EQ(stored[i].status().sampler(), "fake");
  }
  EXPECT_GE(sampler->passes_.load(), 3);
  EXPECT_EQ(collector.hellos().at(0).status().sampler(), "fake");
  EXPECT_TRUE(collector.WaitUntil([&] { return collector.goodbyes_locked() == 1; }));
}

// Answers like systemd would, without a system bus.
class RecordingRestarter final : public UnitRestarter {
 public:
  absl::StatusOr<std::string> Restart(const std::string& unit) override {
    restarted.push_back(unit);
    return std::string("/org/freedesktop/systemd1/job/9");
  }
  absl::StatusOr<std::string> ActiveState(const std::string& unit) override {
    return std::string("active");
  }
  std::vector<std::string> restarted;  // read after the agent is gone
};

drip::v1::Command MitigationCommand(const std::string& id, const std::string& action,
                                    bool dry_run) {
  drip::v1::Command command;
  command.set_id(id);
  command.mutable_mitigation()->set_action(action);
  command.mutable_mitigation()->set_unit("leaky.service");
  command.mutable_mitigation()->set_pid(4321);
  command.mutable_mitigation()->set_instance("4321@1700000000");
  command.mutable_mitigation()->set_dry_run(dry_run);
  return command;
}

TEST(AgentTest, MitigationCommandsGoToTheExecutorAndAreAnswered) {
  FakeCollector collector({.commands = {MitigationCommand("m-rec", "recommend", false),
                                        MitigationCommand("m-restart", "restart-unit", false),
                                        MitigationCommand("m-signal", "signal-process", false)}});
  ASSERT_NE(collector.port(), 0);
  AgentConfig config = TestConfig(collector.address());
  config.mitigation.allowed_actions = {"restart-unit"};
  auto owned_restarter = std::make_unique<RecordingRestarter>();
  RecordingRestarter* restarter = owned_restarter.get();
  std::map<std::string, drip::v1::CommandResult> results;
  {
    // restart-unit acts only on a system service the agent's last pass read.
    Agent agent(config, std::make_unique<FakeSampler>(1, std::vector<std::string>{"leaky.service"}),
                drip::v1::Hello(), nullptr, std::move(owned_restarter));
    ASSERT_TRUE(agent.RunOnePass().ok());
    agent.Start();
    ASSERT_TRUE(collector.WaitUntil([&] { return collector.command_result_count_locked() >= 3; }));
    for (const drip::v1::CommandResult& r : collector.command_results()) {
      results[r.command_id()] = r;
    }
    EXPECT_EQ(restarter->restarted, std::vector<std::string>{"leaky.service"});
  }
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results["m-rec"].ok());
  EXPECT_EQ(results["m-rec"].detail(), "recommend only: nothing done on the host");
  EXPECT_TRUE(results["m-restart"].ok()) << results["m-restart"].error();
  EXPECT_EQ(results["m-restart"].detail(),
            "restarting leaky.service (systemd job /org/freedesktop/systemd1/job/9)");
  EXPECT_FALSE(results["m-signal"].ok());
  EXPECT_TRUE(results["m-signal"].refused());
}

TEST(AgentTest, FirstPassCallbackRunsOnceAndPassEndsAreRecorded) {
  Agent agent(TestConfig("127.0.0.1:1"), std::make_unique<FakeSampler>(1), drip::v1::Hello());
  const auto before = std::chrono::steady_clock::now();
  int calls = 0;
  agent.SetFirstPassCallback([&] { ++calls; });
  agent.RequestStop();
  agent.Run();
  EXPECT_EQ(calls, 1);
  EXPECT_GE(agent.last_pass_end(), before);
}

TEST(AgentTest, RequestStopBeforeRunEndsAfterOnePass) {
  auto owned_sampler = std::make_unique<FakeSampler>(1);
  FakeSampler* sampler = owned_sampler.get();
  Agent agent(TestConfig("127.0.0.1:1"), std::move(owned_sampler), drip::v1::Hello());
  agent.RequestStop();
  agent.Run();
  EXPECT_EQ(sampler->passes_.load(), 1);
}

}  // namespace
}  // namespace drip::agent
