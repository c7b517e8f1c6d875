#include "agent/agent_metrics.h"

#include "common/base/mitigation_action.h"
#include "fmt/format.h"

namespace drip::agent {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

AgentMetrics::AgentMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  cpu_seconds_ = &BuildCounter()
                      .Name("drip_agent_cpu_seconds_total")
                      .Help("CPU time (user + system) the agent has used")
                      .Register(r)
                      .Add({});
  rss_bytes_ = &BuildGauge()
                    .Name("drip_agent_resident_memory_bytes")
                    .Help("The agent's resident set size")
                    .Register(r)
                    .Add({});
  pass_seconds_ = &BuildHistogram()
                       .Name("drip_agent_pass_duration_seconds")
                       .Help("Wall time of one sampling pass (processes, units, slab caches)")
                       .Register(r)
                       .Add({}, prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.0025,
                                                                        0.005, 0.01, 0.025, 0.05,
                                                                        0.1, 0.25, 0.5, 1, 2.5, 5});
  auto& entities = BuildGauge()
                       .Name("drip_agent_entities")
                       .Help("Entities the last pass sampled, by kind")
                       .Register(r);
  processes_ = &entities.Add({{"kind", "process"}});
  units_ = &entities.Add({{"kind", "unit"}});
  slab_caches_ = &entities.Add({{"kind", "slab"}});
  exits_ = &BuildCounter()
                .Name("drip_agent_process_exits_total")
                .Help("Process exits reported (BPF sampler)")
                .Register(r)
                .Add({});
  skipped_ = &BuildCounter()
                  .Name("drip_agent_skipped_entities_total")
                  .Help("Entities left out because a pass had more than max_entities")
                  .Register(r)
                  .Add({});
  lost_events_ = &BuildCounter()
                      .Name("drip_agent_process_events_lost_total")
                      .Help("Process fork/exec/exit events the kernel dropped (ring buffer full)")
                      .Register(r)
                      .Add({});
  buffered_batches_ = &BuildGauge()
                           .Name("drip_agent_buffered_batches")
                           .Help("Batches waiting for the collector's acknowledgement")
                           .Register(r)
                           .Add({});
  dropped_batches_ = &BuildCounter()
                          .Name("drip_agent_dropped_batches_total")
                          .Help("Batches dropped unsent because the buffer bound was hit")
                          .Register(r)
                          .Add({});
  fallback_ = &BuildGauge()
                   .Name("drip_agent_sampler_fallback")
                   .Help("1 when the agent runs the /proc sampler because BPF could not load")
                   .Register(r)
                   .Add({});
  sampler_info_ = &BuildGauge()
                       .Name("drip_agent_sampler_info")
                       .Help("The process sampler in use (value 1) and why it fell back, if it did")
                       .Register(r);
  mitigations_ = &BuildCounter()
                      .Name("drip_agent_mitigations_total")
                      .Help(
                          "Mitigation commands handled, by action and outcome (succeeded, "
                          "failed, refused, dry-run)")
                      .Register(r);
  refused_commands_ = &BuildCounter()
                           .Name("drip_agent_commands_refused_total")
                           .Help(
                               "Collector commands refused by the agent's guard, by kind "
                               "(snapshot, mitigation) and reason (outside_allow_list, "
                               "rate_limited)")
                           .Register(r);
  for (const char* kind : {"snapshot", "mitigation"}) {
    for (const char* reason : {"outside_allow_list", "rate_limited"}) {
      refused_commands_->Add({{"kind", kind}, {"reason", reason}});
    }
  }
}

absl::StatusOr<std::unique_ptr<AgentMetrics>> AgentMetrics::Create(
    const std::string& listen_address, const std::string& sampler,
    const std::string& fallback_reason) {
  std::unique_ptr<AgentMetrics> metrics(new AgentMetrics());
  metrics->sampler_info_->Add({{"sampler", sampler}, {"fallback_reason", fallback_reason}}).Set(1);
  metrics->fallback_->Set(fallback_reason.empty() ? 0 : 1);
  if (listen_address.empty()) return metrics;
  try {
    metrics->exposer_ = std::make_unique<prometheus::Exposer>(listen_address);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        fmt::format("metrics.listen_address {}: cannot listen: {}", listen_address, e.what()));
  }
  metrics->exposer_->RegisterCollectable(metrics->registry_);
  std::vector<int> ports = metrics->exposer_->GetListeningPorts();
  metrics->port_ = ports.empty() ? 0 : ports.front();
  return metrics;
}

void AgentMetrics::RecordPass(const Pass& pass, const SelfUsage& usage,
                              const BatchBuffer::Stats& buffer) {
  if (usage.cpu_seconds > last_cpu_seconds_) {
    cpu_seconds_->Increment(usage.cpu_seconds - last_cpu_seconds_);
    last_cpu_seconds_ = usage.cpu_seconds;
  }
  rss_bytes_->Set(static_cast<double>(usage.rss_bytes));
  pass_seconds_->Observe(std::chrono::duration<double>(pass.duration).count());
  processes_->Set(static_cast<double>(pass.processes));
  units_->Set(static_cast<double>(pass.units));
  slab_caches_->Set(static_cast<double>(pass.slab_caches));
  exits_->Increment(static_cast<double>(pass.exits));
  skipped_->Increment(static_cast<double>(pass.skipped));
  if (pass.lost_events_total > last_lost_events_) {
    lost_events_->Increment(static_cast<double>(pass.lost_events_total - last_lost_events_));
    last_lost_events_ = pass.lost_events_total;
  }
  buffered_batches_->Set(static_cast<double>(buffer.buffered_batches));
  if (buffer.dropped_batches > last_dropped_batches_) {
    dropped_batches_->Increment(
        static_cast<double>(buffer.dropped_batches - last_dropped_batches_));
    last_dropped_batches_ = buffer.dropped_batches;
  }
}

void AgentMetrics::RecordMitigation(const std::string& action, const std::string& outcome) {
  const bool known = mitigation_action::IsKnown(action);
  mitigations_->Add({{"action", known ? action : "unknown"}, {"outcome", outcome}}).Increment();
}

void AgentMetrics::RecordRefusedCommand(const std::string& kind, const std::string& reason) {
  refused_commands_->Add({{"kind", kind}, {"reason", reason}}).Increment();
}

}  // namespace drip::agent
