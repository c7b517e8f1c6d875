#include "agent/agent.h"

#include <chrono>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agent/sampler_factory.h"
#include "common/base/clock.h"
#include "common/base/duration.h"
#include "common/daemon/logging.h"
#include "common/rpc/tls_settings.h"
#include "common/version.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

CollectorStreamOptions StreamOptions(const AgentConfig& config) {
  CollectorStreamOptions options;
  options.address = config.collector;
  if (config.collectors.size() > 1) {
    options.alternates.assign(config.collectors.begin() + 1, config.collectors.end());
  }
  options.redirect_to = config.redirect_to;
  options.tls = config.tls;
  options.backoff_initial = config.backoff.initial;
  options.backoff_max = config.backoff.max;
  return options;
}

BatchBufferOptions BufferOptions(const AgentConfig& config) {
  BatchBufferOptions options;
  options.max_batches = config.buffer.max_batches;
  options.max_bytes = config.buffer.max_bytes;
  return options;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Agent>> Agent::Create(const AgentConfig& config) {
  // Unreadable certificate files at start are a configuration error to report now, not
  // an outage to retry (later, during a rotation, they are retried).
  grpc::ChannelArguments ignored_args;
  if (absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
          MakeChannelCredentials(config.tls, &ignored_args);
      !credentials.ok()) {
    return credentials.status();
  }
  if (config.tls.plaintext) {
    Logger("agent")->warn(
        "TLS is off (tls.plaintext: true): samples and commands travel in the clear and any "
        "process that can answer at {} is taken for the collector",
        config.collector);
  }
  absl::StatusOr<HostFacts> facts = HostFacts::Read(config.proc_root);
  if (!facts.ok()) return facts.status();
  absl::StatusOr<std::unique_ptr<HostSampler>> sampler = CreateSampler(config, SystemClock::Get());
  if (!sampler.ok()) return sampler.status();
  absl::StatusOr<std::unique_ptr<AgentMetrics>> metrics = AgentMetrics::Create(
      config.metrics.listen_address, (*sampler)->name(), (*sampler)->fallback_reason());
  if (!metrics.ok()) return metrics.status();
  if ((*metrics)->port() != 0) {
    Logger("agent")->info("serving the agent's own metrics on port {}", (*metrics)->port());
  }
  return std::make_unique<Agent>(config, std::move(*sampler), BuildHello(config, *facts),
                                 std::move(*metrics));
}

drip::v1::Hello Agent::BuildHello(const AgentConfig& config, const HostFacts& facts) {
  drip::v1::Hello hello;
  hello.set_host(config.host);
  auto& labels = *hello.mutable_labels();
  if (!facts.kernel.empty()) labels["kernel"] = facts.kernel;
  if (!facts.os.empty()) labels["os"] = facts.os;
  if (!facts.arch.empty()) labels["arch"] = facts.arch;
  for (const auto& [key, value] : config.labels) labels[key] = value;
  hello.set_agent_version(drip::kVersion);
  hello.set_memory_total_bytes(facts.memory_total_bytes);
  hello.set_boot_time_ms(facts.boot_time_ms);
  return hello;
}

Agent::Agent(AgentConfig config, std::unique_ptr<Sampler> sampler, drip::v1::Hello hello,
             std::unique_ptr<AgentMetrics> metrics, std::unique_ptr<UnitRestarter> restarter)
    : config_(std::move(config)),
      sampler_(std::move(sampler)),
      metrics_(std::move(metrics)),
      buffer_(BufferOptions(config_)),
      versions_(config_.proc_root),
      restarter_(restarter ? std::move(restarter) : std::make_unique<SdBusUnitRestarter>()),
      last_pass_end_(std::chrono::steady_clock::now().time_since_epoch().count()) {
  stream_ = std::make_unique<CollectorStream>(StreamOptions(config_), std::move(hello), &buffer_,
                                              [this] { return CurrentStatus(); });
  SnapshotCommandOptions snapshot_options;
  snapshot_options.enabled = config_.snapshots.enabled;
  snapshot_options.cpu_budget = config_.snapshots.cpu_budget;
  snapshot_options.sampling_mean_bytes = config_.snapshots.sample_bytes;
  snapshot_options.max_duration_seconds =
      std::chrono::duration<double>(config_.snapshots.max_duration).count();
  snapshot_options.host = config_.host;
  snapshot_options.proc_root = config_.proc_root;
  snapshots_ = std::make_unique<SnapshotCommandRunner>(
      snapshot_options,
      [this](drip::v1::CommandResult result) { stream_->SendCommandResult(std::move(result)); });
  MitigationExecutorOptions mitigation_options;
  mitigation_options.allowed_actions = config_.mitigation.allowed_actions;
  mitigation_options.proc_root = config_.proc_root;
  mitigation_options.restarter = restarter_.get();
  mitigation_options.metrics = metrics_.get();
  mitigations_ = std::make_unique<MitigationExecutor>(std::move(mitigation_options));
  CommandGuardOptions guard_options;
  guard_options.allowed_components = config_.commands.allowed_components;
  guard_options.max_snapshots_per_hour = config_.snapshots.max_per_hour;
  guard_options.proc_root = config_.proc_root;
  guard_options.observed_unit = [this](std::string_view component) {
    std::lock_guard<std::mutex> lock(mu_);
    return observed_units_.count(std::string(component)) > 0;
  };
  guard_ = std::make_unique<CommandGuard>(std::move(guard_options));
  stream_->SetCommandHandler([this](const drip::v1::Command& command) {
    if (absl::Status admitted = guard_->Admit(command); !admitted.ok()) {
      Logger("agent")->warn("refused command {} from the collector: {}", command.id(),
                            std::string(admitted.message()));
      drip::v1::CommandResult result;
      result.set_command_id(command.id());
      result.set_ok(false);
      result.set_refused(true);
      result.set_error(std::string(admitted.message()));
      if (metrics_ != nullptr) {
        metrics_->RecordRefusedCommand(command.has_snapshot() ? "snapshot" : "mitigation",
                                       admitted.code() == absl::StatusCode::kResourceExhausted
                                           ? "rate_limited"
                                           : "outside_allow_list");
      }
      stream_->SendCommandResult(std::move(result));
      return;
    }
    if (command.has_mitigation()) {
      mitigations_->Submit(command, [this](drip::v1::CommandResult result) {
        stream_->SendCommandResult(std::move(result));
      });
      return;
    }
    snapshots_->Submit(command);
  });
}

std::chrono::steady_clock::time_point Agent::last_pass_end() const {
  return std::chrono::steady_clock::time_point(
      std::chrono::steady_clock::duration(last_pass_end_.load()));
}

Agent::~Agent() { stream_->Stop(); }

void Agent::Start() { stream_->Start(); }

void Agent::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_requested_ = true;
  }
  cv_.notify_all();
}

drip::v1::AgentStatus Agent::CurrentStatus() const {
  drip::v1::AgentStatus status;
  status.set_sampler(sampler_->name());
  {
    std::lock_guard<std::mutex> lock(mu_);
    status.set_cpu_seconds(self_usage_.cpu_seconds);
    status.set_rss_bytes(self_usage_.rss_bytes);
    status.set_processes(last_pass_.processes);
    status.set_pass_seconds(std::chrono::duration<double>(last_pass_.duration).count());
    status.set_skipped_entities(skipped_entities_);
  }
  status.set_sampler_fallback_reason(sampler_->fallback_reason());
  BatchBuffer::Stats buffered = buffer_.stats();
  status.set_buffered_batches(buffered.buffered_batches);
  status.set_dropped_batches(buffered.dropped_batches);
  status.set_dropped_samples(buffered.dropped_samples);
  return status;
}

absl::StatusOr<size_t> Agent::RunOnePass() {
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<drip::v1::Sample>> samples = sampler_->SampleOnce();
  AgentMetrics::Pass pass;
  pass.duration = std::chrono::steady_clock::now() - started;
  std::set<std::string> observed_units;
  if (samples.ok()) {
    for (const drip::v1::Sample& s : *samples) {
      if (s.memory_case() == drip::v1::Sample::kCgroup && s.component().starts_with("svc:")) {
        observed_units.insert(s.component());
      }
      switch (s.memory_case()) {
        case drip::v1::Sample::kProcess:
          ++pass.processes;
          break;
        case drip::v1::Sample::kCgroup:
          ++pass.units;
          break;
        case drip::v1::Sample::kSlab:
          ++pass.slab_caches;
          break;
        case drip::v1::Sample::kProcessExit:
          ++pass.exits;
          break;
        case drip::v1::Sample::MEMORY_NOT_SET:
          break;
      }
    }
  }
  const uint64_t skipped_total = sampler_->skipped_entities();
  pass.lost_events_total = sampler_->lost_events();
  // The agent's own cost is refreshed with every pass; a failure only leaves it stale.
  SelfUsage usage_now;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::StatusOr<SelfUsage> usage = SelfUsage::Read(config_.proc_root); usage.ok()) {
      self_usage_ = *usage;
    }
    pass.skipped = skipped_total - skipped_entities_;
    skipped_entities_ = skipped_total;
    if (samples.ok()) {
      last_pass_ = pass;
      observed_units_ = std::move(observed_units);
    }
    usage_now = self_usage_;
  }
  if (metrics_) metrics_->RecordPass(pass, usage_now, buffer_.stats());
  if (!samples.ok()) return samples.status();

  const size_t total = samples->size();
  const size_t per_batch = static_cast<size_t>(config_.max_samples_per_batch);
  // Read before the samples move into batches; in sample order.
  std::vector<std::pair<size_t, drip::v1::InstanceVersion>> versions =
      versions_.NewInstances(*samples);
  auto next_version = versions.begin();
  for (size_t begin = 0; begin < total; begin += per_batch) {
    const size_t end = std::min(total, begin + per_batch);
    drip::v1::SampleBatch batch;
    batch.mutable_samples()->Reserve(static_cast<int>(end - begin));
    for (size_t i = begin; i < end; ++i) {
      *batch.add_samples() = std::move((*samples)[i]);
    }
    for (; next_version != versions.end() && next_version->first < end; ++next_version) {
      *batch.add_versions() = std::move(next_version->second);
    }
    batch.set_ends_pass(end == total);
    const uint64_t sequence = buffer_.Push(std::move(batch));
    Logger("agent")->trace("buffered batch {} ({} samples)", sequence, end - begin);
  }
  return total;
}

void Agent::Run() {
  Start();
  auto log = Logger("agent");
  log->info("sampling every {} with the {} sampler; streaming to {} as host '{}'",
            FormatDuration(config_.interval), sampler_->name(), config_.collector, config_.host);
  using SteadyClock = std::chrono::steady_clock;
  const SteadyClock::duration interval = config_.interval;
  SteadyClock::time_point next = SteadyClock::now();
  bool first_pass = true;
  for (;;) {
    absl::StatusOr<size_t> pass = RunOnePass();
    last_pass_end_ = SteadyClock::now().time_since_epoch().count();
    if (first_pass) {
      first_pass = false;
      if (first_pass_callback_) first_pass_callback_();
    }
    if (!pass.ok() && !sampling_failing_) {
      sampling_failing_ = true;
      log->error("sampling failed: {}; retrying every interval (logged again once it works)",
                 std::string(pass.status().message()));
    } else if (pass.ok() && sampling_failing_) {
      sampling_failing_ = false;
      log->info("sampling works again ({} samples)", *pass);
    } else if (pass.ok()) {
      log->debug("pass: {} samples buffered", *pass);
    }

    next += interval;
    const SteadyClock::time_point now = SteadyClock::now();
    if (next <= now) {
      // Overran: continue on the grid from the next tick still ahead.
      const auto missed = (now - next) / interval + 1;
      next += missed * interval;
      log->debug("a sampling pass took longer than the interval; skipped {} ticks", missed);
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_until(lock, next, [&] { return stop_requested_; })) break;
  }
  stream_->Stop();
  log->info("stopped; {} batches the collector had not acknowledged are discarded",
            buffer_.stats().buffered_batches);
}

}  // namespace drip::agent
