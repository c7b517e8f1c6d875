// Agent: drip-agent's daemon, wired from its config — a Sampler read every interval,
// whose samples go in batches into the BatchBuffer, from which the CollectorStream
// sends them to the collector.
//
//   sampling thread (Run)            connection + reader threads (CollectorStream)
//   Sampler::SampleOnce ─► split ─► BatchBuffer ─► Hello/batches ─► collector
//                                        ▲                            │
//                                        └──── Welcome / Ack ◄────────┘
//
// Commands from the collector are handed off at once so that the stream's reader never
// blocks: heap snapshots to the SnapshotCommandRunner, mitigations to the
// MitigationExecutor's own worker thread (a systemd call may block for its timeout).
//
// Passes are scheduled on a fixed grid (start + k × interval, steady clock) so that the
// series does not drift; a pass that overruns skips the ticks it missed rather than
// bunching up.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "agent/agent_config.h"
#include "agent/agent_metrics.h"
#include "agent/batch_buffer.h"
#include "agent/collector_stream.h"
#include "agent/command_guard.h"
#include "agent/heap/snapshot_command_runner.h"
#include "agent/host_facts.h"
#include "agent/instance_version_reader.h"
#include "agent/mitigation_executor.h"
#include "agent/sampler.h"
#include "agent/systemd_unit_restarter.h"
#include "drip/v1/agent.pb.h"

namespace drip::agent {

class Agent {
 public:
  // The production wiring: sampler per config.sampler, host facts from config.proc_root.
  // Fails when no sampler can run or the host facts cannot be read.
  static absl::StatusOr<std::unique_ptr<Agent>> Create(const AgentConfig& config);

  // The Hello this agent sends: host, labels (kernel, os and arch, then the configured
  // ones, which win on a clash), version, memory size and boot time.
  static drip::v1::Hello BuildHello(const AgentConfig& config, const HostFacts& facts);

  // `hello` as from BuildHello (tests pass their own); `metrics` may be null;
  // `restarter` (restart-unit mitigations) defaults to systemd over the system bus.
  Agent(AgentConfig config, std::unique_ptr<Sampler> sampler, drip::v1::Hello hello,
        std::unique_ptr<AgentMetrics> metrics = nullptr,
        std::unique_ptr<UnitRestarter> restarter = nullptr);
  ~Agent();  // stops the stream if Run() did not

  // Starts streaming to the collector. Idempotent.
  void Start();
  // Samples every interval until RequestStop(), then stops the stream. Starts first if
  // needed. Call from one thread.
  void Run();
  // Makes Run() return after the current pass. Thread-safe; callable before Run().
  void RequestStop();

  // One sampling pass into the buffer, split into batches of at most
  // max_samples_per_batch. Returns the number of samples buffered. Run() calls it.
  absl::StatusOr<size_t> RunOnePass();

  // What the agent reports about itself in Hello and with each batch.
  drip::v1::AgentStatus CurrentStatus() const;

  // Called once on Run()'s thread when its first sampling pass has ended (whether or not
  // it sampled anything): the agent is up. main.cc tells systemd READY=1 there. Set
  // before Run().
  void SetFirstPassCallback(std::function<void()> callback) {
    first_pass_callback_ = std::move(callback);
  }
  // When Run()'s last pass ended (construction time before the first): the liveness of
  // the sampling loop, for the systemd watchdog. Thread-safe.
  std::chrono::steady_clock::time_point last_pass_end() const;

  const AgentConfig& config() const { return config_; }
  const BatchBuffer& buffer() const { return buffer_; }
  BatchBuffer* mutable_buffer() { return &buffer_; }
  const CollectorStream& stream() const { return *stream_; }
  const Sampler& sampler() const { return *sampler_; }
  // Null when the agent serves no metrics.
  AgentMetrics* metrics() const { return metrics_.get(); }

 private:
  const AgentConfig config_;
  const std::unique_ptr<Sampler> sampler_;
  const std::unique_ptr<AgentMetrics> metrics_;
  BatchBuffer buffer_;
  // Only RunOnePass (the sampling thread) uses it.
  InstanceVersionReader versions_;
  std::unique_ptr<CollectorStream> stream_;  // after buffer_: it holds a pointer to it
  // Checks every command before the runners see it.
  std::unique_ptr<CommandGuard> guard_;
  // After stream_: it answers through it, and is destroyed (joined) first.
  std::unique_ptr<SnapshotCommandRunner> snapshots_;
  // Before mitigations_, which uses it.
  std::unique_ptr<UnitRestarter> restarter_;
  // After stream_ and restarter_, for the same reasons as snapshots_.
  std::unique_ptr<MitigationExecutor> mitigations_;
  std::function<void()> first_pass_callback_;
  std::atomic<std::chrono::steady_clock::rep> last_pass_end_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ = false;
  SelfUsage self_usage_;  // refreshed each pass
  AgentMetrics::Pass last_pass_;
  // The system services (svc:<unit>) the unit sampler read in the last pass: the only
  // units restart-unit may touch (CommandGuard).
  std::set<std::string> observed_units_;
  uint64_t skipped_entities_ = 0;
  bool sampling_failing_ = false;
};

}  // namespace drip::agent
