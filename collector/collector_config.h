// CollectorConfig: every option of drip-collector, read strictly from YAML (see
// docs/collector.md for what each one means and deploy/collector.example.yaml for a
// complete file). The nesting mirrors the YAML keys: grpc.listen_address is
// config.grpc.listen_address.
//
// Loading fails on unknown keys, malformed values and inconsistent combinations, with a
// message naming file:line:key, because a typo in a production config must not
// silently fall back to a default. A value type; not shared between threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analyzer/detector_config.h"
#include "collector/pipeline/leak_report_book.h"
#include "collector/pipeline/mitigation_policy.h"
#include "collector/pipeline/snapshot_scheduler.h"
#include "common/rpc/tls_settings.h"
#include "diagnoser/diagnoser_config.h"

namespace drip::collector {

struct CollectorConfig {
  struct Grpc {
    std::string listen_address = "0.0.0.0:7070";
    // Largest AgentMessage the collector accepts; larger batches are rejected (and
    // counted) with RESOURCE_EXHAUSTED.
    uint64_t max_message_bytes = 16 * 1024 * 1024;
    std::chrono::milliseconds keepalive_time = std::chrono::seconds(30);
    std::chrono::milliseconds keepalive_timeout = std::chrono::seconds(10);
  };
  struct Storage {
    std::string path = "/var/lib/drip";
    std::chrono::milliseconds retention = std::chrono::hours(24 * 14);
    bool sync_writes = true;
    std::chrono::milliseconds chunk_window = std::chrono::hours(1);
    std::chrono::milliseconds retention_check_interval = std::chrono::minutes(10);
    // Threads that run store writes, so that gRPC's threads never block on fsync.
    // RocksDB commits concurrent writers in one group, so more threads mean fewer
    // fsyncs per batch under load.
    uint64_t write_threads = 4;
    // After writes failed for lack of space, the store takes writes again only once its
    // filesystem has this much free (docs/storage.md, "Write errors and recovery").
    uint64_t recovery_free_space = 128 * 1024 * 1024;
  };
  struct Metrics {
    // Loopback by default: the metrics name every host and component of the fleet. A
    // Prometheus on another host needs the collector's address (or 0.0.0.0) set here.
    std::string listen_address = "127.0.0.1:9464";  // empty: no metrics endpoint
  };
  struct Ingest {
    std::chrono::milliseconds max_future_skew = std::chrono::minutes(5);
    uint64_t max_samples_per_batch = 100000;
    // Each host's stream is read at most this fast (0: no limit); bursts up to
    // burst_samples_per_host pass at once. A host over it is slowed, not refused.
    uint64_t max_samples_per_second_per_host = 100000;
    uint64_t burst_samples_per_host = 1000000;
    // Before its hello names and authenticates the host, a stream is anyone's: it must say
    // hello this soon after connecting, and at most this many may be waiting to at once
    // (more are refused with RESOURCE_EXHAUSTED until some have).
    std::chrono::milliseconds hello_timeout = std::chrono::seconds(30);
    uint64_t max_streams_awaiting_hello = 1024;
    // Components (leak entities) one host may have in the detector: samples of new ones
    // past it are not stored (counted). A host runs hundreds; an agent inventing names
    // must not grow the collector's memory, and its replay at start, without bound.
    uint64_t max_components_per_host = 10000;
  };
  struct Log {
    std::string level = "info";
  };
  // Several collectors sharing a fleet through etcd (docs/cluster.md). No endpoint: a
  // standalone collector, the embedded default.
  struct Cluster {
    std::vector<std::string> etcd_endpoints;
    std::string member_name;  // empty: this host's name
    // host:port agents, dripctl and the other collectors reach this one at; empty: the
    // gRPC listen address with the port it bound (and this host's name for 0.0.0.0).
    std::string advertise_address;
    std::chrono::milliseconds lease_ttl = std::chrono::seconds(10);
    // How many members keep each host's samples (docs/cluster.md, "Replication"): its
    // owner and the next replication_factor - 1 members of its rendezvous order. 1..3.
    int replication_factor = 2;
    // TLS to etcd when cluster.tls.ca_file is set (then cert_file and key_file too, if
    // etcd asks for client certificates); plaintext otherwise.
    TlsSettings tls;
    bool enabled() const { return !etcd_endpoints.empty(); }
  };

  // Who may use the query API (docs/security.md): the access file read at start.
  struct Auth {
    std::string access_file;  // empty: TLS clients are viewers, plaintext is open
  };

  Grpc grpc;
  // TLS for agents and dripctl; required unless tls.plaintext is true (common/rpc/tls_settings.h).
  TlsSettings tls;
  Auth auth;
  Storage storage;
  Metrics metrics;
  Ingest ingest;
  Log log;
  Cluster cluster;
  // The online leak detector (docs/detector.md): its thresholds under `detector:`, and
  // how much stored history it replays at start (detector.rebuild_window).
  analyzer::DetectorConfig detector;
  std::chrono::milliseconds detector_rebuild_window = std::chrono::hours(72);
  // Heap snapshots of suspects and their diagnosis (docs/snapshot.md), under `snapshots:`.
  SnapshotPolicy snapshots;
  diagnoser::DiagnoserConfig diagnoser;
  // Leak reports (`reports:`) and what may be done about them (`mitigation:`); see
  // docs/configuration.md.
  ReportPolicy reports;
  MitigationConfig mitigation;

  // Reads `path`; absent keys keep their defaults.
  static absl::StatusOr<CollectorConfig> FromFile(const std::string& path);
  // `source` names the text in error messages (a file name, "<test>").
  static absl::StatusOr<CollectorConfig> FromString(std::string_view yaml, std::string source);

  // Cross-field and format checks that also apply after command-line overrides. The
  // message names the option ("grpc.listen_address: ...") but no file line.
  absl::Status Validate() const;
};

}  // namespace drip::collector
