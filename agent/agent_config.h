// AgentConfig: every option of drip-agent, read strictly from YAML. docs/agent.md says
// what each one means and deploy/agent.example.yaml is a complete file. Nested structs
// mirror the YAML keys: buffer.max_batches is config.buffer.max_batches.
//
// Loading fails on unknown keys, malformed or out-of-range values and inconsistent
// combinations, with a message "FILE:LINE: KEY: what is wrong", because a typo in a
// production config must not silently fall back to a default. A value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/rpc/tls_settings.h"

namespace drip::agent {

// The most memory buffer.max_bytes may give unacknowledged batches: half of the
// MemoryMax the agent's unit sets (256 MiB), leaving the rest to sampling and snapshots.
inline constexpr uint64_t kMaxBufferBytes = 128ull * 1024 * 1024;

struct AgentConfig {
  struct Buffer {
    // Unacknowledged batches kept while the collector is away; beyond either bound the
    // oldest are dropped (and the collector told about the gap).
    uint64_t max_batches = 1000;
    // Memory the buffered batches take (not their size on the wire), at most
    // kMaxBufferBytes: the buffer lives in the agent's own memory.
    uint64_t max_bytes = 64ull * 1024 * 1024;
  };
  struct Backoff {
    std::chrono::milliseconds initial = std::chrono::milliseconds(500);
    std::chrono::milliseconds max = std::chrono::seconds(30);
  };
  struct Log {
    std::string level = "info";
  };

  // The host name every sample is filed under; the machine's host name by default.
  std::string host;
  std::string collector = "127.0.0.1:7070";
  // `collectors:`, when several collectors share the fleet (docs/cluster.md): every entry,
  // the first also in `collector`. Empty when only `collector` was given. The agent dials
  // the first, moves to the next when one cannot be reached, and to whichever a collector
  // names as this host's owner.
  std::vector<std::string> collectors;
  // `redirect_to:`: glob patterns of the host:port addresses beyond `collectors` that a
  // collector may send this host to as its owner (a member that joined later). Empty:
  // only the listed collectors.
  std::vector<std::string> redirect_to;
  // TLS to the collector (common/rpc/tls_settings.h): mutual, with this host's certificate,
  // whose SAN (or CN) must name `host`; required unless tls.plaintext is true.
  TlsSettings tls;
  std::chrono::milliseconds interval = std::chrono::seconds(10);
  // Sent in Hello next to the automatic kernel, os and arch labels (and winning over
  // them on a clash).
  std::map<std::string, std::string> labels;
  Buffer buffer;
  Backoff backoff;
  // A pass with more entities is sent as several batches, keeping each message well
  // under the collector's size limit.
  uint64_t max_samples_per_batch = 10000;
  struct Metrics {
    // Where the agent serves its own Prometheus metrics (cost, passes, fallback);
    // "" turns them off. Loopback by default: node-local scrapers only.
    std::string listen_address = "127.0.0.1:9102";
  };

  // "auto" (BPF, falling back to /proc with a logged reason), "bpf" (fail to start
  // without it) or "proc".
  std::string sampler = "auto";
  // Per-unit cgroup memory and kernel slab caches, next to the processes.
  bool sample_units = true;
  bool sample_slab = true;
  // At most this many entities per pass; beyond it the smallest processes are left out
  // and counted, so a host with a runaway fork count cannot make the agent expensive.
  uint64_t max_entities = 50000;
  Metrics metrics;
  Log log;
  std::string proc_root = "/proc";
  // Heap snapshots the collector may command (docs/snapshot.md).
  struct Snapshots {
    bool enabled = true;
    double cpu_budget = 0.05;   // attach mode: share of one core the probes may cost
    uint64_t sample_bytes = 0;  // attach mode's T; 0: sized from the allocation rate
    std::chrono::milliseconds max_duration = std::chrono::minutes(10);
    // At most this many snapshots started per rolling hour, whatever the collector asks.
    uint64_t max_per_hour = 6;
  };
  Snapshots snapshots;
  // What the collector's mitigation commands may do on this host (docs/agent.md
  // "Mitigation"). The host has the last word over the collector's policy.
  struct Mitigation {
    // Of "restart-unit" and "signal-process". Empty (the default): no action is carried
    // out; dry runs and recommendations are still answered.
    std::set<std::string> allowed_actions;
  };
  Mitigation mitigation;
  // Which processes the collector's commands (snapshots, mitigations) may target at all
  // (agent/command_guard.h): glob patterns over the component this agent names for the
  // target, e.g. "svc:nginx.service", "svc:api-*.service", "proc:redis-server".
  struct Commands {
    std::vector<std::string> allowed_components = {"svc:*"};
  };
  Commands commands;

  // Every default, with host set to this machine's host name.
  static AgentConfig Defaults();
  // Reads `path`; absent keys keep their defaults.
  static absl::StatusOr<AgentConfig> FromFile(const std::string& path);
  // `source` names the text in error messages (a file name, "<test>").
  static absl::StatusOr<AgentConfig> FromString(std::string_view yaml, std::string source);

  // Cross-field checks that must also hold after command-line overrides. The message
  // names the option ("host: must not be empty") but no file line.
  absl::Status Validate() const;
};

}  // namespace drip::agent
