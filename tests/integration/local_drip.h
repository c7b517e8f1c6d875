// LocalDrip: a real drip-collector (RocksDB in a temp dir, gRPC and metrics on
// ephemeral loopback ports) and a real drip-agent streaming to it, as integration tests
// and the demo run them. Binaries come from the build tree (paths compiled in).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tests/integration/child_process.h"

namespace drip::testing {

std::string CollectorBinary();
std::string AgentBinary();
std::string DripctlBinary();
std::string TestAllocBinary();
std::string LeakyExampleBinary();

// A detector that judges seconds instead of hours, so that a child leaking a few MiB/s
// is suspected within a minute (docs/detector.md explains each key).
inline constexpr const char* kFastDetectorYaml = R"(detector:
  epoch: 10s
  floor_epochs: 1
  startup_grace: 0s
  fleet_min_climb: 20s
  min_climb: 30s
  young_min_climb: 30s
  level_off: 30s
  max_lateness: 20s
)";

// Snapshots that start as soon as a suspect appears and last 12 s.
inline constexpr const char* kFastSnapshotsYaml = R"(snapshots:
  duration: 12s
  hosts_per_component: 1
  grace: 30s
)";

// Certificates and credentials for a LocalDrip that runs with mutual TLS (see
// tests/support/test_pki.h for making them).
struct LocalDripTls {
  std::string ca_file;
  std::string collector_cert;
  std::string collector_key;
  std::string agent_cert;  // must name the agent's host
  std::string agent_key;
  std::string access_file;                 // the collector's auth.access_file; may be empty
  std::vector<std::string> dripctl_flags;  // e.g. {"--ca", ca, "--token-file", token}
};

class LocalDrip {
 public:
  LocalDrip();
  ~LocalDrip();

  // Starts the collector; on restart, reuses the storage dir and the gRPC port.
  // `extra_yaml` is appended to its config (e.g. a `detector:` section).
  absl::Status StartCollector(const std::string& extra_yaml = "");
  // Before StartCollector: keep the store in `path` instead of the temp dir (e.g. on a
  // small tmpfs), with `extra_storage_yaml` lines (indented two spaces) added under
  // `storage:`.
  void SetStorage(const std::string& path, const std::string& extra_storage_yaml = "");
  // `extra_args` go on drip-agent's command line (e.g. {"--sampler", "proc"});
  // `extra_yaml` is appended to its config (e.g. a `mitigation:` section).
  absl::Status StartAgent(const std::string& host, std::chrono::milliseconds interval,
                          const std::vector<std::string>& extra_args = {},
                          const std::string& extra_yaml = "");
  void KillCollector(int sig);

  // Daemons started after this call use mutual TLS, and Dripctl() passes the flags;
  // without it every connection is plaintext (tls.plaintext: true).
  void UseTls(LocalDripTls tls) { tls_ = std::move(tls); }
  // Which components the agent's commands may target (commands.allowed_components);
  // everything by default, since test programs run outside systemd services.
  void SetAgentAllowedComponents(std::vector<std::string> patterns) {
    allowed_components_ = std::move(patterns);
  }
  // The agent dials these (`collectors:`) instead of this LocalDrip's own collector.
  void SetAgentCollectors(std::vector<std::string> addresses) {
    agent_collectors_ = std::move(addresses);
  }
  // Where else a collector may send the agent (`redirect_to:` patterns); none by default.
  void SetAgentRedirectTo(std::vector<std::string> patterns) {
    agent_redirect_to_ = std::move(patterns);
  }

  const std::string& grpc_address() const { return grpc_address_; }
  const std::string& metrics_address() const { return metrics_address_; }
  // From the agent's ready file: the process sampler it runs and its metrics address.
  const std::string& agent_sampler() const { return agent_sampler_; }
  const std::string& agent_metrics_address() const { return agent_metrics_address_; }
  ChildProcess* collector() { return collector_.get(); }
  ChildProcess* agent() { return agent_.get(); }
  TempDir& dir() { return dir_; }

  // Runs dripctl against this collector.
  CommandOutput Dripctl(std::vector<std::string> args);
  // `dripctl series --json` parsed; an error carries dripctl's stderr.
  absl::StatusOr<nlohmann::json> Series(const std::string& host, const std::string& component);

  // The collector's answer to grpc.health.v1.Health/Check for the whole server: 1
  // SERVING, 2 NOT_SERVING; an error when the call fails.
  absl::StatusOr<int> CollectorHealth();

  // Logs of both daemons, for failure messages.
  std::string Logs() const;

 private:
  TempDir dir_;
  std::unique_ptr<ChildProcess> collector_;
  std::unique_ptr<ChildProcess> agent_;
  std::string grpc_address_;
  std::string metrics_address_;
  std::string agent_sampler_;
  std::string agent_metrics_address_;
  std::string storage_path_;
  std::string storage_yaml_;
  int collector_starts_ = 0;
  std::optional<LocalDripTls> tls_;
  std::vector<std::string> allowed_components_ = {"*"};
  std::vector<std::string> agent_collectors_;
  std::vector<std::string> agent_redirect_to_;
};

// `dripctl suspects --json`'s entry for (host, component), polled once a second until it
// is there (null after `wait`); *last keeps the last listing for the failure message.
nlohmann::json WaitForSuspect(LocalDrip& drip, const std::string& host,
                              const std::string& component, std::chrono::seconds wait,
                              std::string* last);

// The suspect's snapshot attempt once it is no longer pending (null after `wait`).
nlohmann::json WaitForFinishedSnapshot(LocalDrip& drip, const std::string& host,
                                       const std::string& component, std::chrono::seconds wait,
                                       std::string* last);

// Timestamps of the samples, in `dripctl series --json` output, of the series whose
// instance starts with `instance_prefix`.
std::vector<int64_t> SampleTimestamps(const nlohmann::json& series,
                                      const std::string& instance_prefix);

// The component the agent gives process `pid`, read from `drip-agent sample --once --json`.
absl::StatusOr<std::string> ComponentOfPid(int pid);

}  // namespace drip::testing
