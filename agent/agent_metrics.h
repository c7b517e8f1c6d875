// AgentMetrics: the agent's own Prometheus metrics, served on a local port so that a
// node scraper can watch the watcher — what the agent costs (CPU, RSS, pass duration),
// what it sees (processes, units, slab caches, exits) and what it leaves out (cap,
// lost events, buffer drops), and which sampler runs and why. docs/agent.md lists them.
// Thread-safe (prometheus-cpp handles are atomic).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "agent/batch_buffer.h"
#include "agent/host_facts.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace drip::agent {

class AgentMetrics {
 public:
  // What one pass did, as the Agent measured it.
  struct Pass {
    std::chrono::nanoseconds duration{0};
    uint64_t processes = 0;
    uint64_t units = 0;
    uint64_t slab_caches = 0;
    uint64_t exits = 0;
    uint64_t skipped = 0;
    uint64_t lost_events_total = 0;  // since start
  };

  // Registers every metric; serves them on `listen_address` ("host:port", port 0 picks
  // one) unless it is empty. `fallback_reason` is "" unless /proc runs instead of BPF.
  static absl::StatusOr<std::unique_ptr<AgentMetrics>> Create(const std::string& listen_address,
                                                              const std::string& sampler,
                                                              const std::string& fallback_reason);

  void RecordPass(const Pass& pass, const SelfUsage& usage, const BatchBuffer::Stats& buffer);

  // One mitigation command handled: `action` as the collector named it ("restart-unit",
  // "signal-process", "recommend"; anything else is counted as "unknown" so that a bad
  // collector cannot grow the label set), `outcome` one of "succeeded", "failed",
  // "refused", "dry-run".
  void RecordMitigation(const std::string& action, const std::string& outcome);

  // A collector command CommandGuard refused: `kind` "snapshot" or "mitigation",
  // `reason` "outside_allow_list" or "rate_limited"
  // (drip_agent_commands_refused_total{kind,reason}).
  void RecordRefusedCommand(const std::string& kind, const std::string& reason);

  // The bound port, 0 when not serving.
  int port() const { return port_; }
  prometheus::Registry& registry() { return *registry_; }

 private:
  AgentMetrics();

  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
  prometheus::Counter* cpu_seconds_;
  prometheus::Gauge* rss_bytes_;
  prometheus::Histogram* pass_seconds_;
  prometheus::Gauge* processes_;
  prometheus::Gauge* units_;
  prometheus::Gauge* slab_caches_;
  prometheus::Counter* exits_;
  prometheus::Counter* skipped_;
  prometheus::Counter* lost_events_;
  prometheus::Gauge* buffered_batches_;
  prometheus::Counter* dropped_batches_;
  prometheus::Gauge* fallback_;
  prometheus::Family<prometheus::Gauge>* sampler_info_;
  prometheus::Family<prometheus::Counter>* mitigations_;
  prometheus::Family<prometheus::Counter>* refused_commands_;
  double last_cpu_seconds_ = 0;
  uint64_t last_dropped_batches_ = 0;
  uint64_t last_lost_events_ = 0;
};

}  // namespace drip::agent
