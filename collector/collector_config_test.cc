#include "collector/collector_config.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace drip::collector {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::HasSubstr;

// Every config needs a tls section; the tests of other keys say plaintext, appended so
// that the line numbers in their expected errors stay those of their own text.
absl::StatusOr<CollectorConfig> ParseWithPlaintext(std::string yaml, std::string source) {
  if (yaml.find("tls:") == std::string::npos) yaml += "\ntls:\n  plaintext: true\n";
  return CollectorConfig::FromString(yaml, std::move(source));
}

TEST(CollectorConfigTest, EmptyFileGivesDocumentedDefaults) {
  absl::StatusOr<CollectorConfig> c = ParseWithPlaintext("", "<test>");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->grpc.listen_address, "0.0.0.0:7070");
  EXPECT_EQ(c->grpc.max_message_bytes, 16u * 1024 * 1024);
  EXPECT_EQ(c->grpc.keepalive_time, seconds(30));
  EXPECT_EQ(c->grpc.keepalive_timeout, seconds(10));
  EXPECT_EQ(c->storage.path, "/var/lib/drip");
  EXPECT_EQ(c->storage.retention, hours(24 * 14));
  EXPECT_TRUE(c->storage.sync_writes);
  EXPECT_EQ(c->storage.chunk_window, hours(1));
  EXPECT_EQ(c->storage.retention_check_interval, minutes(10));
  EXPECT_EQ(c->storage.write_threads, 4u);
  EXPECT_EQ(c->storage.recovery_free_space, 128u * 1024 * 1024);
  EXPECT_EQ(c->metrics.listen_address, "127.0.0.1:9464");
  EXPECT_EQ(c->ingest.max_future_skew, minutes(5));
  EXPECT_EQ(c->ingest.max_samples_per_batch, 100000u);
  EXPECT_EQ(c->log.level, "info");
}

TEST(CollectorConfigTest, EveryOptionCanBeOverridden) {
  absl::StatusOr<CollectorConfig> c = ParseWithPlaintext(R"(
grpc:
  listen_address: "127.0.0.1:0"
  max_message_bytes: 4MiB
  keepalive_time: 1m
  keepalive_timeout: 20s
storage:
  path: /tmp/drip-store
  retention: 30d
  sync_writes: false
  chunk_window: 30m
  retention_check_interval: 1h
  write_threads: 8
  recovery_free_space: 1GiB
metrics:
  listen_address: ""
ingest:
  max_future_skew: 30s
  max_samples_per_batch: 5000
log:
  level: debug
)",
                                                         "<test>");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->grpc.listen_address, "127.0.0.1:0");
  EXPECT_EQ(c->grpc.max_message_bytes, 4u * 1024 * 1024);
  EXPECT_EQ(c->grpc.keepalive_time, minutes(1));
  EXPECT_EQ(c->grpc.keepalive_timeout, seconds(20));
  EXPECT_EQ(c->storage.path, "/tmp/drip-store");
  EXPECT_EQ(c->storage.retention, hours(24 * 30));
  EXPECT_FALSE(c->storage.sync_writes);
  EXPECT_EQ(c->storage.chunk_window, minutes(30));
  EXPECT_EQ(c->storage.retention_check_interval, hours(1));
  EXPECT_EQ(c->storage.write_threads, 8u);
  EXPECT_EQ(c->storage.recovery_free_space, 1024u * 1024 * 1024);
  EXPECT_EQ(c->metrics.listen_address, "");
  EXPECT_EQ(c->ingest.max_future_skew, seconds(30));
  EXPECT_EQ(c->ingest.max_samples_per_batch, 5000u);
  EXPECT_EQ(c->log.level, "debug");
}

TEST(CollectorConfigTest, UnknownKeyIsAnErrorNamingFileLineAndKey) {
  absl::StatusOr<CollectorConfig> c = ParseWithPlaintext(
      "grpc:\n  listen_address: 0.0.0.0:7070\nstorage:\n  retension: 7d\n", "collector.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("collector.yaml:4"));
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("storage.retension"));
}

TEST(CollectorConfigTest, MalformedDurationIsAnErrorNamingFileLineAndKey) {
  absl::StatusOr<CollectorConfig> c =
      ParseWithPlaintext("ingest:\n  max_future_skew: soon\n", "collector.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("collector.yaml:2"));
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("ingest.max_future_skew"));
}

TEST(CollectorConfigTest, MalformedBoolIsAnErrorNamingFileLineAndKey) {
  absl::StatusOr<CollectorConfig> c =
      ParseWithPlaintext("storage:\n  path: /x\n  sync_writes: sometimes\n", "collector.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("collector.yaml:3"));
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("storage.sync_writes"));
}

TEST(CollectorConfigTest, ListenAddressWithoutPortIsAnErrorNamingFileLineAndKey) {
  absl::StatusOr<CollectorConfig> c =
      ParseWithPlaintext("\ngrpc:\n  listen_address: localhost\n", "collector.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("collector.yaml:3: grpc.listen_address: 'localhost' is not HOST:PORT"));
}

TEST(CollectorConfigTest, MaxMessageBytesAboveLimitIsAnErrorNamingFileLineAndKey) {
  absl::StatusOr<CollectorConfig> c =
      ParseWithPlaintext("grpc:\n  max_message_bytes: 4GiB\n", "collector.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("collector.yaml:2: grpc.max_message_bytes: "));
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("out of range"));
}

TEST(CollectorConfigTest, ChunkWindowLongerThanRetentionIsAnError) {
  absl::StatusOr<CollectorConfig> c =
      ParseWithPlaintext("storage:\n  retention: 2h\n  chunk_window: 3h\n", "collector.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("collector.yaml:3: storage.chunk_window: 3h is longer than "
                        "storage.retention (2h)"));
}

TEST(CollectorConfigTest, ZeroSamplesPerBatchIsAnError) {
  absl::StatusOr<CollectorConfig> c =
      ParseWithPlaintext("ingest:\n  max_samples_per_batch: 0\n", "collector.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("collector.yaml:2: ingest.max_samples_per_batch: 0 is out of range"));
}

TEST(CollectorConfigTest, ReplicationFactorIsTwoByDefaultAndOneToThree) {
  absl::StatusOr<CollectorConfig> c = ParseWithPlaintext("", "collector.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->cluster.replication_factor, 2);
  c = ParseWithPlaintext("cluster:\n  replication_factor: 3\n", "collector.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->cluster.replication_factor, 3);
  c = ParseWithPlaintext("cluster:\n  replication_factor: 4\n", "collector.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("collector.yaml:2: cluster.replication_factor"));
}

TEST(CollectorConfigTest, UnknownLogLevelIsAnError) {
  absl::StatusOr<CollectorConfig> c = ParseWithPlaintext("log:\n  level: loud\n", "collector.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("collector.yaml:2"));
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("log.level"));
}

TEST(CollectorConfigTest, MissingFileIsAnErrorNamingThePath) {
  absl::StatusOr<CollectorConfig> c = CollectorConfig::FromFile("/nonexistent/collector.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("/nonexistent/collector.yaml"));
}

TEST(CollectorConfigTest, FileErrorsNameTheFile) {
  std::string path = ::testing::TempDir() + "/collector_config_test.yaml";
  {
    std::ofstream out(path);
    out << "metrics:\n  listen_address: \"9464\"\n";
  }
  absl::StatusOr<CollectorConfig> c = CollectorConfig::FromFile(path);
  std::remove(path.c_str());
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr(path + ":2: metrics.listen_address: '9464' is not HOST:PORT"));
}

TEST(CollectorConfigTest, ShippedExampleConfigParsesAndMatchesTheDefaults) {
  absl::StatusOr<CollectorConfig> c = CollectorConfig::FromFile(DRIP_EXAMPLE_CONFIG);
  ASSERT_TRUE(c.ok()) << c.status();
  CollectorConfig d;
  EXPECT_EQ(c->grpc.listen_address, d.grpc.listen_address);
  EXPECT_EQ(c->grpc.max_message_bytes, d.grpc.max_message_bytes);
  EXPECT_EQ(c->grpc.keepalive_time, d.grpc.keepalive_time);
  EXPECT_EQ(c->grpc.keepalive_timeout, d.grpc.keepalive_timeout);
  EXPECT_EQ(c->storage.path, d.storage.path);
  EXPECT_EQ(c->storage.retention, d.storage.retention);
  EXPECT_EQ(c->storage.sync_writes, d.storage.sync_writes);
  EXPECT_EQ(c->storage.chunk_window, d.storage.chunk_window);
  EXPECT_EQ(c->storage.retention_check_interval, d.storage.retention_check_interval);
  EXPECT_EQ(c->storage.write_threads, d.storage.write_threads);
  EXPECT_EQ(c->storage.recovery_free_space, d.storage.recovery_free_space);
  EXPECT_EQ(c->snapshots.enabled, d.snapshots.enabled);
  EXPECT_EQ(c->snapshots.hosts_per_component, d.snapshots.hosts_per_component);
  EXPECT_EQ(c->snapshots.min_free_memory_bytes, d.snapshots.min_free_memory_bytes);
  EXPECT_EQ(c->snapshots.cooldown, d.snapshots.cooldown);
  EXPECT_EQ(c->snapshots.duration, d.snapshots.duration);
  EXPECT_EQ(c->snapshots.mode, d.snapshots.mode);
  EXPECT_EQ(c->snapshots.grace, d.snapshots.grace);
  EXPECT_EQ(c->metrics.listen_address, d.metrics.listen_address);
  EXPECT_EQ(c->ingest.max_future_skew, d.ingest.max_future_skew);
  EXPECT_EQ(c->ingest.max_samples_per_batch, d.ingest.max_samples_per_batch);
  EXPECT_EQ(c->log.level, d.log.level);
  EXPECT_EQ(c->reports.quiet_after, d.reports.quiet_after);
  EXPECT_EQ(c->reports.resolve_after, d.reports.resolve_after);
  EXPECT_EQ(c->reports.critical_eta, d.reports.critical_eta);
  EXPECT_EQ(c->reports.warning_eta, d.reports.warning_eta);
  EXPECT_EQ(c->reports.max_stacks, d.reports.max_stacks);
  EXPECT_EQ(c->mitigation.defaults.automatic, d.mitigation.defaults.automatic);
  EXPECT_EQ(c->mitigation.defaults.action, d.mitigation.defaults.action);
  EXPECT_EQ(c->mitigation.defaults.signal, d.mitigation.defaults.signal);
  EXPECT_EQ(c->mitigation.defaults.dry_run, d.mitigation.defaults.dry_run);
  EXPECT_EQ(c->mitigation.defaults.trigger_eta, d.mitigation.defaults.trigger_eta);
  EXPECT_EQ(c->mitigation.defaults.max_host_fraction, d.mitigation.defaults.max_host_fraction);
  EXPECT_EQ(c->mitigation.defaults.cooldown, d.mitigation.defaults.cooldown);
  EXPECT_EQ(c->mitigation.max_actions_per_hour, d.mitigation.max_actions_per_hour);
  EXPECT_EQ(c->mitigation.result_timeout, d.mitigation.result_timeout);
  EXPECT_TRUE(c->mitigation.components.empty());
}

TEST(CollectorConfigTest, ComponentPoliciesStartFromTheDefaultPolicy) {
  auto c = ParseWithPlaintext(R"(
mitigation:
  default:
    cooldown: 2h
    signal: SIGINT
  components:
    - component: "svc:leaky.service"
      mode: automatic
      action: signal-process
      dry_run: false
    - component: "proc:cache"
      signal: KILL
)",
                              "<test>");
  ASSERT_TRUE(c.ok()) << c.status();
  const MitigationPolicy& leaky = c->mitigation.For("svc:leaky.service");
  EXPECT_TRUE(leaky.automatic);
  EXPECT_EQ(leaky.action, "signal-process");
  EXPECT_FALSE(leaky.dry_run);
  EXPECT_EQ(leaky.cooldown, std::chrono::hours(2));  // from the default
  EXPECT_EQ(leaky.signal, 2);
  EXPECT_EQ(c->mitigation.For("proc:cache").signal, 9);
  EXPECT_FALSE(c->mitigation.For("svc:other.service").automatic);
}

TEST(CollectorConfigTest, BadMitigationPoliciesNameTheEntryAndLine) {
  auto bad_signal = ParseWithPlaintext(R"(mitigation:
  components:
    - component: "svc:a.service"
      signal: SIGSTOP
)",
                                       "c.yaml");
  ASSERT_FALSE(bad_signal.ok());
  EXPECT_NE(bad_signal.status().message().find("c.yaml:4: mitigation.components[0].signal"),
            std::string::npos)
      << bad_signal.status();
  auto unknown = ParseWithPlaintext(R"(mitigation:
  components:
    - component: "svc:a.service"
    - component: "svc:b.service"
      acton: restart-unit
)",
                                    "c.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(
      unknown.status().message().find("c.yaml:5: unknown key 'mitigation.components[1].acton'"),
      std::string::npos)
      << unknown.status();
  auto twice = ParseWithPlaintext(R"(mitigation:
  components:
    - component: "svc:a.service"
    - component: "svc:a.service"
)",
                                  "c.yaml");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("c.yaml:4: mitigation.components[1].component"),
            std::string::npos)
      << twice.status();
  auto missing = ParseWithPlaintext("mitigation:\n  components:\n    - mode: manual\n", "c.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("component: required"), std::string::npos)
      << missing.status();
  auto fraction =
      ParseWithPlaintext("mitigation:\n  default:\n    max_host_fraction: 2\n", "c.yaml");
  ASSERT_FALSE(fraction.ok());
  EXPECT_NE(fraction.status().message().find("c.yaml:3: mitigation.default.max_host_fraction"),
            std::string::npos)
      << fraction.status();
  auto etas = ParseWithPlaintext("reports:\n  critical_eta: 12h\n  warning_eta: 6h\n", "c.yaml");
  ASSERT_FALSE(etas.ok());
  EXPECT_NE(etas.status().message().find("c.yaml:3: reports.warning_eta"), std::string::npos)
      << etas.status();
}

TEST(CollectorConfigTest, ValidateNamesTheOptionAfterOverrides) {
  CollectorConfig c;
  c.grpc.listen_address = "nonsense";
  absl::Status s = c.Validate();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("grpc.listen_address: 'nonsense'"));
}

TEST(CollectorConfigTest, MissingTlsSectionIsAnErrorSayingHowToChoosePlaintext) {
  absl::StatusOr<CollectorConfig> c =
      CollectorConfig::FromString("log:\n  level: info\n", "c.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(c.status().message()),
      HasSubstr("c.yaml: tls.ca_file: is required for TLS; set it, or tls.plaintext: true"));
}

TEST(CollectorConfigTest, TlsWithoutKeyFileIsAnErrorNamingTheKey) {
  absl::StatusOr<CollectorConfig> c =
      CollectorConfig::FromString("tls:\n  ca_file: /ca.crt\n  cert_file: /c.crt\n", "c.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("c.yaml: tls.key_file: is required"));
}

TEST(CollectorConfigTest, PlaintextTogetherWithCertificatesIsAnError) {
  absl::StatusOr<CollectorConfig> c =
      CollectorConfig::FromString("tls:\n  plaintext: true\n  cert_file: /c.crt\n", "c.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("c.yaml:2: tls.plaintext: is true but certificate files are set too"));
}

TEST(CollectorConfigTest, ReadsTlsFilesAndAccessFile) {
  absl::StatusOr<CollectorConfig> c = CollectorConfig::FromString(
      "tls:\n  ca_file: /ca.crt\n  cert_file: /c.crt\n  key_file: /c.key\n"
      "auth:\n  access_file: /etc/drip/access.yaml\n",
      "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->tls.plaintext);
  EXPECT_EQ(c->tls.ca_file, "/ca.crt");
  EXPECT_EQ(c->tls.cert_file, "/c.crt");
  EXPECT_EQ(c->tls.key_file, "/c.key");
  EXPECT_EQ(c->auth.access_file, "/etc/drip/access.yaml");
}

TEST(CollectorConfigTest, ServerNameIsRefusedOnTheCollector) {
  absl::StatusOr<CollectorConfig> c = CollectorConfig::FromString(
      "tls:\n  ca_file: /ca.crt\n  cert_file: /c.crt\n  key_file: /c.key\n  server_name: x\n",
      "c.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("tls.server_name: is a client setting"));
}

}  // namespace
}  // namespace drip::collector
