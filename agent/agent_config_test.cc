#include "agent/agent_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <set>
#include <string>
#include <vector>

namespace drip::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Every config needs a tls section; the tests of other keys say plaintext, appended so
// that the line numbers in their expected errors stay those of their own text.
absl::StatusOr<AgentConfig> ParseWithPlaintext(std::string yaml, std::string source) {
  if (yaml.find("tls:") == std::string::npos) yaml += "\ntls:\n  plaintext: true\n";
  return AgentConfig::FromString(yaml, std::move(source));
}

std::string MachineHostName() {
  char name[HOST_NAME_MAX + 1] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

TEST(AgentConfigTest, EmptyFileMeansEveryDefault) {
  auto c = ParseWithPlaintext("", "agent.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host, MachineHostName());
  EXPECT_FALSE(c->host.empty());
  EXPECT_EQ(c->collector, "127.0.0.1:7070");
  EXPECT_EQ(c->interval, seconds(10));
  EXPECT_TRUE(c->labels.empty());
  EXPECT_EQ(c->buffer.max_batches, 1000u);
  EXPECT_EQ(c->buffer.max_bytes, 64u << 20);
  EXPECT_EQ(c->backoff.initial, milliseconds(500));
  EXPECT_EQ(c->backoff.max, seconds(30));
  EXPECT_EQ(c->max_samples_per_batch, 10000u);
  EXPECT_EQ(c->sampler, "auto");
  EXPECT_EQ(c->log.level, "info");
  EXPECT_EQ(c->proc_root, "/proc");
  EXPECT_TRUE(c->mitigation.allowed_actions.empty());
  EXPECT_TRUE(c->Validate().ok());
}

TEST(AgentConfigTest, ReadsEveryOption) {
  auto c = ParseWithPlaintext(R"(host: web-17
collector: "collector.internal:7070"
interval: 2s
labels:
  env: prod
  rack: r7
buffer:
  max_batches: 50
  max_bytes: 8MiB
backoff:
  initial: 100ms
  max: 5s
max_samples_per_batch: 500
sampler: proc
log:
  level: debug
proc_root: /host/proc
)",
                              "agent.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host, "web-17");
  EXPECT_EQ(c->collector, "collector.internal:7070");
  EXPECT_EQ(c->interval, seconds(2));
  EXPECT_EQ(c->labels.at("env"), "prod");
  EXPECT_EQ(c->labels.at("rack"), "r7");
  EXPECT_EQ(c->buffer.max_batches, 50u);
  EXPECT_EQ(c->buffer.max_bytes, 8u << 20);
  EXPECT_EQ(c->backoff.initial, milliseconds(100));
  EXPECT_EQ(c->backoff.max, seconds(5));
  EXPECT_EQ(c->max_samples_per_batch, 500u);
  EXPECT_EQ(c->sampler, "proc");
  EXPECT_EQ(c->log.level, "debug");
  EXPECT_EQ(c->proc_root, "/host/proc");
}

TEST(AgentConfigTest, UnknownKeyIsAnErrorNamingFileLineAndKey) {
  auto c = ParseWithPlaintext("interval: 5s\nbuffer:\n  max_batchs: 10\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(std::string(c.status().message()), "agent.yaml:3: unknown key 'buffer.max_batchs'");
}

TEST(AgentConfigTest, BadValueIsAnErrorNamingFileLineAndKey) {
  auto c = ParseWithPlaintext("host: a\ninterval: often\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("agent.yaml:2: interval:"), std::string::npos) << c.status();

  c = ParseWithPlaintext("sampler: ebpf\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("agent.yaml:1: sampler:"), std::string::npos) << c.status();
  EXPECT_NE(c.status().message().find("auto, bpf, proc"), std::string::npos) << c.status();

  c = ParseWithPlaintext("metrics:\n  listen_address: localhost\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("agent.yaml:2: metrics.listen_address:"), std::string::npos)
      << c.status();

  c = ParseWithPlaintext("max_entities: 0\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("agent.yaml:1: max_entities:"), std::string::npos)
      << c.status();

  c = ParseWithPlaintext("\nbuffer:\n  max_bytes: lots\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("agent.yaml:3: buffer.max_bytes:"), std::string::npos)
      << c.status();

  // The buffer lives in the agent's memory, which its unit caps at 256 MiB.
  c = ParseWithPlaintext("\nbuffer:\n  max_bytes: 1GiB\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("buffer.max_bytes: 1.0 GiB is more than 128.0 MiB"),
            std::string::npos)
      << c.status();
}

TEST(AgentConfigTest, OutOfRangeValuesAreErrors) {
  EXPECT_FALSE(ParseWithPlaintext("interval: 10ms\n", "a.yaml").ok());
  EXPECT_FALSE(ParseWithPlaintext("buffer:\n  max_batches: 0\n", "a.yaml").ok());
  EXPECT_FALSE(ParseWithPlaintext("max_samples_per_batch: 0\n", "a.yaml").ok());
  EXPECT_FALSE(ParseWithPlaintext("max_samples_per_batch: 1000000\n", "a.yaml").ok());
  EXPECT_FALSE(ParseWithPlaintext("log:\n  level: loud\n", "a.yaml").ok());
}

TEST(AgentConfigTest, InconsistentBackoffNamesTheLine) {
  auto c = ParseWithPlaintext("backoff:\n  initial: 1m\n  max: 10s\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(std::string(c.status().message()),
            "agent.yaml:2: backoff.initial: 1m is above backoff.max (10s)");
}

TEST(AgentConfigTest, EmptyHostIsAnError) {
  auto c = ParseWithPlaintext("host: \"\"\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("agent.yaml:1: host:"), std::string::npos) << c.status();
}

// The collector refuses a hello past these limits: the agent says so at start instead of
// retrying a refused hello for ever.
TEST(AgentConfigTest, LabelsAndHostPastWhatTheCollectorAcceptsAreErrors) {
  std::string many = "labels:\n";
  for (int i = 0; i < 62; ++i) many += "  k" + std::to_string(i) + ": v\n";
  auto c = ParseWithPlaintext(many, "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("labels: 62 labels, more than 61"), std::string::npos)
      << c.status();
  c = ParseWithPlaintext("labels:\n  team: " + std::string(2000, 'x') + "\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("labels.team: 2000 bytes, more than 1024"), std::string::npos)
      << c.status();
  c = ParseWithPlaintext("host: " + std::string(300, 'h') + "\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("host: 300 bytes"), std::string::npos) << c.status();
}

TEST(AgentConfigTest, ValidateChecksFlagOverrides) {
  AgentConfig c = AgentConfig::Defaults();
  c.interval = milliseconds(5);
  absl::Status status = c.Validate();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("interval:"), std::string::npos) << status;
  c = AgentConfig::Defaults();
  c.collector = "";
  EXPECT_FALSE(c.Validate().ok());
}

TEST(AgentConfigTest, MissingFileIsNotFoundNamingIt) {
  auto c = AgentConfig::FromFile("/nonexistent/agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(c.status().message().find("/nonexistent/agent.yaml"), std::string::npos);
}

TEST(AgentConfigTest, ShippedExampleParsesAndMatchesTheDefaults) {
  auto c = AgentConfig::FromFile(DRIP_AGENT_EXAMPLE_CONFIG);
  ASSERT_TRUE(c.ok()) << c.status();
  AgentConfig d = AgentConfig::Defaults();
  EXPECT_EQ(c->host, d.host);
  EXPECT_EQ(c->collector, d.collector);
  EXPECT_EQ(c->interval, d.interval);
  EXPECT_EQ(c->buffer.max_batches, d.buffer.max_batches);
  EXPECT_EQ(c->buffer.max_bytes, d.buffer.max_bytes);
  EXPECT_EQ(c->backoff.initial, d.backoff.initial);
  EXPECT_EQ(c->backoff.max, d.backoff.max);
  EXPECT_EQ(c->max_samples_per_batch, d.max_samples_per_batch);
  EXPECT_EQ(c->sampler, d.sampler);
  EXPECT_EQ(c->sample_units, d.sample_units);
  EXPECT_EQ(c->sample_slab, d.sample_slab);
  EXPECT_EQ(c->max_entities, d.max_entities);
  EXPECT_EQ(c->metrics.listen_address, d.metrics.listen_address);
  EXPECT_EQ(c->log.level, d.log.level);
  EXPECT_EQ(c->proc_root, d.proc_root);
  EXPECT_EQ(c->mitigation.allowed_actions, d.mitigation.allowed_actions);
}

TEST(AgentConfigTest, ReadsMitigationAllowedActions) {
  auto c = ParseWithPlaintext(
      "mitigation:\n  allowed_actions:\n    - signal-process\n    - restart-unit\n", "agent.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mitigation.allowed_actions,
            (std::set<std::string>{"restart-unit", "signal-process"}));

  c = ParseWithPlaintext("mitigation:\n  allowed_actions: [restart-unit]\n", "agent.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mitigation.allowed_actions, (std::set<std::string>{"restart-unit"}));

  c = ParseWithPlaintext("mitigation:\n  allowed_actions: []\n", "agent.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->mitigation.allowed_actions.empty());
}

TEST(AgentConfigTest, UnknownMitigationActionNamesFileLineAndKey) {
  auto c = ParseWithPlaintext(
      "interval: 5s\nmitigation:\n  allowed_actions: [signal-process, reboot]\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(std::string(c.status().message()),
            "agent.yaml:3: mitigation.allowed_actions: unknown action 'reboot' (expected "
            "restart-unit or signal-process)");

  // "recommend" needs no permission, so it is not an action to allow.
  c = ParseWithPlaintext("mitigation:\n  allowed_actions: [recommend]\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("unknown action 'recommend'"), std::string::npos)
      << c.status();

  c = ParseWithPlaintext("mitigation:\n  allowed_actions: signal-process\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("agent.yaml:2: mitigation.allowed_actions:"),
            std::string::npos)
      << c.status();

  c = ParseWithPlaintext("mitigation:\n  allow: [signal-process]\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("unknown key 'mitigation.allow'"), std::string::npos)
      << c.status();
}

TEST(AgentConfigTest, ValidateChecksMitigationActionsSetByHand) {
  AgentConfig c = AgentConfig::Defaults();
  c.mitigation.allowed_actions = {"signal-process", "kill-all"};
  absl::Status status = c.Validate();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(std::string(status.message()),
            "mitigation.allowed_actions: unknown action 'kill-all' (expected restart-unit or "
            "signal-process)");
}

TEST(AgentConfigTest, MissingTlsSectionIsAnErrorSayingHowToChoosePlaintext) {
  auto c = AgentConfig::FromString("interval: 5s\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(
                "agent.yaml: tls.ca_file: is required for TLS; set it, or tls.plaintext: true"),
            std::string::npos)
      << c.status();
}

TEST(AgentConfigTest, MutualTlsNeedsCertificateAndKey) {
  auto c = AgentConfig::FromString("tls:\n  ca_file: /ca.crt\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("tls.cert_file: is required for TLS"), std::string::npos)
      << c.status();
}

TEST(AgentConfigTest, ReadsTlsCommandAllowListAndSnapshotRate) {
  auto c = AgentConfig::FromString(
      "tls:\n  ca_file: /ca.crt\n  cert_file: /a.crt\n  key_file: /a.key\n"
      "  server_name: collector.example.com\n"
      "commands:\n  allowed_components: [\"svc:nginx.service\", \"proc:redis-*\"]\n"
      "snapshots:\n  max_per_hour: 2\n",
      "agent.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->tls.server_name, "collector.example.com");
  EXPECT_EQ(c->tls.cert_file, "/a.crt");
  EXPECT_EQ(c->commands.allowed_components,
            (std::vector<std::string>{"svc:nginx.service", "proc:redis-*"}));
  EXPECT_EQ(c->snapshots.max_per_hour, 2u);
}

TEST(AgentConfigTest, DefaultAllowListIsSystemdServicesOnly) {
  auto c = ParseWithPlaintext("", "agent.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->commands.allowed_components, std::vector<std::string>{"svc:*"});
  EXPECT_EQ(c->snapshots.max_per_hour, 6u);
}

TEST(AgentConfigTest, EmptyAllowListEntryIsAnError) {
  auto c = ParseWithPlaintext("commands:\n  allowed_components: [\"\"]\n", "agent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(
      c.status().message().find("agent.yaml:2: commands.allowed_components: an entry is empty"),
      std::string::npos)
      << c.status();
}

TEST(AgentConfigTest, ACollectorsListIsDialledInOrderAndExcludesASingleCollector) {
  auto c =
      ParseWithPlaintext("collectors: [\"c0:7070\", \"c1:7070\", \"c2:7070\"]\n", "agent.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->collector, "c0:7070");
  EXPECT_EQ(c->collectors, (std::vector<std::string>{"c0:7070", "c1:7070", "c2:7070"}));

  auto both = ParseWithPlaintext("collector: c0:7070\ncollectors: [\"c1:7070\"]\n", "agent.yaml");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().message(),
            "agent.yaml:2: collectors: give either collector or collectors, not both");
  auto empty = ParseWithPlaintext("collectors: [\"c0:7070\", \" \"]\n", "agent.yaml");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("collectors: an entry is empty"), std::string::npos)
      << empty.status();
}

TEST(AgentConfigTest, RedirectPatternsAreHostPortGlobsAndDefaultToNone) {
  auto none = ParseWithPlaintext("collectors: [\"c0:7070\"]\n", "agent.yaml");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->redirect_to.empty());

  auto some = ParseWithPlaintext(
      "collectors: [\"c0:7070\"]\nredirect_to: [\"*.collectors.example:7070\"]\n", "agent.yaml");
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_EQ(some->redirect_to, (std::vector<std::string>{"*.collectors.example:7070"}));

  auto no_port = ParseWithPlaintext("redirect_to: [\"*\"]\n", "agent.yaml");
  ASSERT_FALSE(no_port.ok());
  EXPECT_EQ(no_port.status().message(),
            "agent.yaml:1: redirect_to: '*' is not a host:port pattern (e.g. "
            "'*.collectors.example:7070')");
}

}  // namespace
}  // namespace drip::agent
