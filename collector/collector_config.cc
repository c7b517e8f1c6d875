#include "collector/collector_config.h"

#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "common/base/config_reader.h"
#include "common/base/duration.h"
#include "common/base/status_macros.h"
#include "common/base/strings.h"
#include "common/daemon/listen_address.h"
#include "common/rpc/message_size.h"
#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace drip::collector {
namespace {

// gRPC takes message limits as int, and the server's own receive limit is set to twice
// this plus headroom (see CollectorServer), which must still fit.
constexpr uint64_t kMinMessageBytes = 4 * 1024;
constexpr uint64_t kMaxSamplesPerBatchLimit = 10'000'000;
constexpr uint64_t kMaxWriteThreads = 256;

struct Problem {
  std::string key;
  std::string what;
};

// Checks that ConfigReader cannot express: formats, upper bounds, combinations.
std::optional<Problem> FindProblem(const CollectorConfig& c) {
  if (auto a = ListenAddress::Parse(c.grpc.listen_address); !a.ok()) {
    return Problem{"grpc.listen_address", std::string(a.status().message())};
  }
  if (!c.metrics.listen_address.empty()) {
    if (auto a = ListenAddress::Parse(c.metrics.listen_address); !a.ok()) {
      return Problem{"metrics.listen_address", std::string(a.status().message())};
    }
  }
  if (c.grpc.max_message_bytes < kMinMessageBytes ||
      c.grpc.max_message_bytes > kMaxMessageBytesLimit) {
    return Problem{"grpc.max_message_bytes",
                   fmt::format("{} is out of range [{}, {}]", FormatBytes(c.grpc.max_message_bytes),
                               FormatBytes(kMinMessageBytes), FormatBytes(kMaxMessageBytesLimit))};
  }
  if (c.storage.path.empty()) return Problem{"storage.path", "must not be empty"};
  if (c.storage.chunk_window > c.storage.retention) {
    return Problem{"storage.chunk_window", fmt::format("{} is longer than storage.retention ({})",
                                                       FormatDuration(c.storage.chunk_window),
                                                       FormatDuration(c.storage.retention))};
  }
  if (c.storage.write_threads < 1 || c.storage.write_threads > kMaxWriteThreads) {
    return Problem{"storage.write_threads", fmt::format("{} is out of range [1, {}]",
                                                        c.storage.write_threads, kMaxWriteThreads)};
  }
  if (c.ingest.max_samples_per_batch < 1 ||
      c.ingest.max_samples_per_batch > kMaxSamplesPerBatchLimit) {
    return Problem{"ingest.max_samples_per_batch",
                   fmt::format("{} is out of range [1, {}]", c.ingest.max_samples_per_batch,
                               kMaxSamplesPerBatchLimit)};
  }
  if (c.reports.warning_eta < c.reports.critical_eta) {
    return Problem{
        "reports.warning_eta",
        fmt::format("{} is shorter than reports.critical_eta ({})",
                    FormatDuration(c.reports.warning_eta), FormatDuration(c.reports.critical_eta))};
  }
  if (c.cluster.enabled()) {
    for (const std::string& endpoint : c.cluster.etcd_endpoints) {
      if (TrimWhitespace(endpoint).empty()) {
        return Problem{"cluster.etcd_endpoints", "an endpoint is empty"};
      }
    }
    if (c.cluster.lease_ttl > std::chrono::minutes(5)) {
      return Problem{"cluster.lease_ttl",
                     fmt::format("{} is longer than 5m: a dead collector's hosts would wait "
                                 "that long for another",
                                 FormatDuration(c.cluster.lease_ttl))};
    }
  }
  // Last, so that a file without a tls section still hears of its other problems.
  if (std::optional<TlsProblem> tls = FindTlsProblem(c.tls, TlsRole::kServer)) {
    return Problem{tls->key, tls->what};
  }
  return std::nullopt;
}

absl::Status ReadAll(ConfigReader& r, CollectorConfig* c) {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  RETURN_IF_ERROR(r.ReadString("grpc.listen_address", &c->grpc.listen_address));
  RETURN_IF_ERROR(r.ReadByteSize("grpc.max_message_bytes", &c->grpc.max_message_bytes));
  RETURN_IF_ERROR(r.ReadDuration("grpc.keepalive_time", &c->grpc.keepalive_time, seconds(1)));
  RETURN_IF_ERROR(r.ReadDuration("grpc.keepalive_timeout", &c->grpc.keepalive_timeout, seconds(1)));
  RETURN_IF_ERROR(ReadTlsSettings(r, "tls.", &c->tls));
  RETURN_IF_ERROR(r.ReadString("auth.access_file", &c->auth.access_file));
  RETURN_IF_ERROR(r.ReadString("storage.path", &c->storage.path));
  RETURN_IF_ERROR(
      r.ReadDuration("storage.retention", &c->storage.retention, std::chrono::hours(1)));
  RETURN_IF_ERROR(r.ReadBool("storage.sync_writes", &c->storage.sync_writes));
  RETURN_IF_ERROR(
      r.ReadDuration("storage.chunk_window", &c->storage.chunk_window, std::chrono::minutes(1)));
  RETURN_IF_ERROR(r.ReadDuration("storage.retention_check_interval",
                                 &c->storage.retention_check_interval, seconds(1)));
  RETURN_IF_ERROR(r.ReadUint("storage.write_threads", &c->storage.write_threads));
  RETURN_IF_ERROR(r.ReadByteSize("storage.recovery_free_space", &c->storage.recovery_free_space));
  RETURN_IF_ERROR(r.ReadString("metrics.listen_address", &c->metrics.listen_address));
  RETURN_IF_ERROR(
      r.ReadDuration("ingest.max_future_skew", &c->ingest.max_future_skew, milliseconds(0)));
  RETURN_IF_ERROR(r.ReadUint("ingest.max_samples_per_batch", &c->ingest.max_samples_per_batch));
  RETURN_IF_ERROR(r.ReadUint("ingest.max_samples_per_second_per_host",
                             &c->ingest.max_samples_per_second_per_host, 0, 1'000'000'000));
  RETURN_IF_ERROR(r.ReadUint("ingest.burst_samples_per_host", &c->ingest.burst_samples_per_host, 1,
                             10'000'000'000));
  RETURN_IF_ERROR(r.ReadDuration("ingest.hello_timeout", &c->ingest.hello_timeout, seconds(1)));
  RETURN_IF_ERROR(r.ReadUint("ingest.max_streams_awaiting_hello",
                             &c->ingest.max_streams_awaiting_hello, 1, 1'000'000));
  RETURN_IF_ERROR(r.ReadUint("ingest.max_components_per_host", &c->ingest.max_components_per_host,
                             1, 1'000'000));
  RETURN_IF_ERROR(
      r.ReadEnum("log.level", {"trace", "debug", "info", "warn", "error", "off"}, &c->log.level));
  RETURN_IF_ERROR(analyzer::ReadDetectorConfig(r, "detector.", &c->detector));
  RETURN_IF_ERROR(
      r.ReadDuration("detector.rebuild_window", &c->detector_rebuild_window, milliseconds(0)));
  RETURN_IF_ERROR(r.ReadBool("snapshots.enabled", &c->snapshots.enabled));
  RETURN_IF_ERROR(
      r.ReadUint("snapshots.hosts_per_component", &c->snapshots.hosts_per_component, 1, 1000));
  RETURN_IF_ERROR(r.ReadByteSize("snapshots.min_free_memory", &c->snapshots.min_free_memory_bytes));
  RETURN_IF_ERROR(r.ReadDuration("snapshots.cooldown", &c->snapshots.cooldown, milliseconds(0)));
  RETURN_IF_ERROR(r.ReadDuration("snapshots.duration", &c->snapshots.duration, seconds(1)));
  RETURN_IF_ERROR(
      r.ReadDuration("snapshots.extend_up_to", &c->snapshots.extend_up_to, milliseconds(0)));
  RETURN_IF_ERROR(r.ReadEnum("snapshots.mode", {"", "attach", "preload"}, &c->snapshots.mode));
  RETURN_IF_ERROR(r.ReadDuration("snapshots.grace", &c->snapshots.grace, seconds(1)));
  RETURN_IF_ERROR(diagnoser::ReadDiagnoserConfig(r, "diagnoser.", &c->diagnoser));
  RETURN_IF_ERROR(r.ReadDuration("reports.quiet_after", &c->reports.quiet_after, seconds(1)));
  RETURN_IF_ERROR(r.ReadDuration("reports.resolve_after", &c->reports.resolve_after, seconds(1)));
  RETURN_IF_ERROR(r.ReadDuration("reports.critical_eta", &c->reports.critical_eta));
  RETURN_IF_ERROR(r.ReadDuration("reports.warning_eta", &c->reports.warning_eta));
  RETURN_IF_ERROR(r.ReadUint("reports.max_stacks", &c->reports.max_stacks, 1, 100));
  RETURN_IF_ERROR(ReadMitigationConfig(r, &c->mitigation));
  RETURN_IF_ERROR(r.ReadStringList("cluster.etcd_endpoints", &c->cluster.etcd_endpoints));
  RETURN_IF_ERROR(r.ReadString("cluster.member_name", &c->cluster.member_name));
  RETURN_IF_ERROR(r.ReadString("cluster.advertise_address", &c->cluster.advertise_address));
  RETURN_IF_ERROR(r.ReadDuration("cluster.lease_ttl", &c->cluster.lease_ttl, seconds(2)));
  RETURN_IF_ERROR(r.ReadInt("cluster.replication_factor", &c->cluster.replication_factor, 1, 3));
  RETURN_IF_ERROR(ReadTlsSettings(r, "cluster.tls.", &c->cluster.tls));
  c->cluster.tls.plaintext = c->cluster.tls.ca_file.empty();
  return r.CheckNoUnknownKeys();
}

}  // namespace

absl::StatusOr<CollectorConfig> CollectorConfig::FromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(fmt::format("{}: cannot open config file", path));
  std::stringstream text;
  text << in.rdbuf();
  return FromString(text.str(), path);
}

absl::StatusOr<CollectorConfig> CollectorConfig::FromString(std::string_view yaml,
                                                            std::string source) {
  ASSIGN_OR_RETURN(ConfigReader reader, ConfigReader::FromString(yaml, source));
  CollectorConfig config;
  RETURN_IF_ERROR(ReadAll(reader, &config));
  if (std::optional<Problem> p = FindProblem(config)) {
    // Same shape as ConfigReader's own errors: file:line: key: what.
    return absl::InvalidArgumentError(ConfigProblem(source, yaml, p->key, p->what));
  }
  return config;
}

absl::Status CollectorConfig::Validate() const {
  if (std::optional<Problem> p = FindProblem(*this)) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", p->key, p->what));
  }
  return absl::OkStatus();
}

}  // namespace drip::collector
