#include "collector/pipeline/leak_pipeline.h"

#include <utility>

#include "common/base/duration.h"
#include "common/base/status_macros.h"
#include "common/daemon/logging.h"

namespace drip::collector {

absl::StatusOr<std::unique_ptr<LeakPipeline>> LeakPipeline::Open(const LeakPipelineOptions& options,
                                                                 SeriesStore* store,
                                                                 CommandRouter* commands,
                                                                 CollectorMetrics* metrics,
                                                                 const Clock* clock) {
  std::unique_ptr<LeakPipeline> pipeline(
      new LeakPipeline(options, store, commands, metrics, clock));
  // Recent history first, so that suspects and the normal levels behind them survive a
  // restart; the caller serves agents only afterwards, so live batches never interleave
  // with the replay.
  const auto rebuild_start = std::chrono::steady_clock::now();
  const int64_t now_ms = clock->NowMs();
  absl::StatusOr<uint64_t> replayed =
      pipeline->detector_.Rebuild(store, now_ms - options.rebuild_window.count(), now_ms);
  if (!replayed.ok()) return WithContext(replayed.status(), "rebuilding the leak detector");
  metrics->detector_rebuild_seconds.Set(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - rebuild_start).count());
  if (absl::Status loaded = pipeline->versions_.Load(store); !loaded.ok()) {
    return WithContext(loaded, "loading instance versions");
  }
  if (absl::Status loaded = pipeline->reports_.Load(); !loaded.ok()) {
    return WithContext(loaded, "loading leak reports");
  }
  pipeline->mitigations_.Restore(now_ms);
  pipeline->RunOnce();
  Logger("collector")
      ->info("leak detector rebuilt from {} stored samples: {} series, {} suspects", *replayed,
             pipeline->detector_.series_count(), pipeline->detector_.suspect_count());
  return pipeline;
}

namespace {
// One thread diagnoses: a snapshot takes milliseconds to a few seconds, and a round asks
// at most snapshots.hosts_per_component hosts per component. Past the queue an attempt
// fails and the component's next round asks again, so a burst of large snapshots never
// holds unbounded memory.
constexpr size_t kDiagnosisThreads = 1;
constexpr size_t kMaxQueuedDiagnoses = 8;
}  // namespace

LeakPipeline::LeakPipeline(const LeakPipelineOptions& options, SeriesStore* store,
                           CommandRouter* commands, CollectorMetrics* metrics, const Clock* clock)
    : options_(options),
      store_(store),
      commands_(commands),
      metrics_(metrics),
      clock_(clock),
      detector_(options_.detector, clock),
      snapshots_(options_.snapshots, options_.diagnoser, commands, &diagnoses_, clock),
      reports_(options_.reports, &options_.mitigation, store->reports(), &versions_),
      mitigations_(options_.mitigation, &reports_, commands, metrics, clock),
      diagnoses_("drip-diagnose", kDiagnosisThreads, kMaxQueuedDiagnoses),
      report_metrics_(metrics),
      loop_("drip-pipeline", [this] {
        RunOnce();
        return options_.interval;
      }) {}

LeakPipeline::~LeakPipeline() { Stop(); }

void LeakPipeline::Start() {
  // Open() has just run a pass.
  loop_.Start(options_.interval);
}

void LeakPipeline::Stop() { loop_.Stop(); }

void LeakPipeline::SetClusterReportView(ClusterReportView view) {
  std::lock_guard<std::mutex> lock(view_mu_);
  shared_reports_ = view.shared_reports;
  pending_view_ = std::move(view);
}

absl::StatusOr<drip::v1::LeakReport> LeakPipeline::KnownReport(const std::string& id) const {
  absl::StatusOr<drip::v1::LeakReport> own = reports_.Get(id);
  if (own.ok()) return own;
  std::shared_ptr<const std::vector<drip::v1::LeakReport>> shared;
  {
    std::lock_guard<std::mutex> lock(view_mu_);
    shared = shared_reports_;
  }
  for (const drip::v1::LeakReport& r : *shared) {
    if (r.id() == id) return r;
  }
  return absl::NotFoundError(fmt::format("leak report {} is not known to this member", id));
}

void LeakPipeline::RunOnce() {
  const int64_t now_ms = clock_->NowMs();
  const auto start = std::chrono::steady_clock::now();
  detector_.AdvanceTo(now_ms / 1000);
  if (now_ms >= next_forget_ms_) {
    // Hourly: a series silent for longer than the rebuild window is what a restart would
    // not replay; its state and index slot go, so that components that come and go (one
    // per job, per container) do not grow the detector without bound.
    const size_t forgotten =
        detector_.ForgetSilentBefore((now_ms - options_.rebuild_window.count()) / 1000);
    if (forgotten > 0) {
      Logger("collector")
          ->info("leak detector: forgot {} series silent for more than {}", forgotten,
                 FormatDuration(options_.rebuild_window));
    }
    next_forget_ms_ = now_ms + 3600 * 1000;
  }
  metrics_->detector_run_seconds.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  std::optional<ClusterReportView> view;
  std::optional<std::map<std::string, analyzer::ComponentDrift>> peer_drifts;
  {
    std::lock_guard<std::mutex> lock(view_mu_);
    view.swap(pending_view_);
    peer_drifts.swap(pending_peer_drifts_);
  }
  if (peer_drifts) detector_.SetPeerDrifts(*peer_drifts);
  if (view) {
    reports_.SetOwnership(std::move(view->owns));
    reports_.Adopt(*view->shared_reports, now_ms);
    peer_suspects_ = std::move(view->peer_suspects);
  }
  FleetSuspects suspects = detector_.Suspects();
  // Overdue commands end first (snapshots, mitigations, relays): a host whose snapshot
  // never answered is free for the next one.
  commands_->Expire(now_ms);
  // The reports show each suspect's snapshot and diagnosis. Read before the round starts
  // new snapshots: a new one replaces the suspect's attempt, and the diagnosis that
  // finished since the last pass must reach its report first (with a short cool-down the
  // next round starts in the very pass that would have seen it).
  snapshots_.Annotate(&suspects);
  snapshots_.Tick(now_ms, suspects);
  if (peer_suspects_.hosts.empty() && peer_suspects_.components.empty()) {
    reports_.Update(now_ms, suspects);
  } else {
    FleetSuspects fleet = suspects;
    AddPeerSuspects(peer_suspects_, &fleet);
    reports_.Update(now_ms, fleet);
  }
  mitigations_.Tick(now_ms);
  report_metrics_.Refresh(reports_.List("", ""), reports_.counts());
  RefreshMetrics(suspects);
  if (sharing_drift_.load()) {
    std::vector<std::pair<std::string, analyzer::ComponentDrift>> drifts = detector_.LocalDrifts();
    std::lock_guard<std::mutex> lock(view_mu_);
    local_drifts_ = std::move(drifts);
  }
}

std::vector<std::pair<std::string, analyzer::ComponentDrift>> LeakPipeline::LocalDrifts() const {
  // The first call, at a clustered collector's start, computes them: the first share must
  // not be empty. Later passes keep them fresh.
  if (!sharing_drift_.exchange(true)) return detector_.LocalDrifts();
  std::lock_guard<std::mutex> lock(view_mu_);
  return local_drifts_;
}

void LeakPipeline::SetPeerDrifts(std::map<std::string, analyzer::ComponentDrift> peers) {
  std::lock_guard<std::mutex> lock(view_mu_);
  pending_peer_drifts_ = std::move(peers);
}

void LeakPipeline::RefreshMetrics(const FleetSuspects& suspects) {
  // The scheduler counts; the metrics follow by the difference since the last pass.
  const SnapshotScheduler::Counts counts = snapshots_.counts();
  metrics_->snapshots_requested.Increment(
      static_cast<double>(counts.requested - snapshot_counts_.requested));
  metrics_->snapshots_succeeded.Increment(
      static_cast<double>(counts.succeeded - snapshot_counts_.succeeded));
  metrics_->snapshots_failed.Increment(
      static_cast<double>(counts.failed - snapshot_counts_.failed));
  snapshot_counts_ = counts;
  metrics_->detector_suspects.Set(static_cast<double>(suspects.hosts.size()));
  metrics_->detector_suspected_components.Set(static_cast<double>(suspects.components.size()));
  metrics_->detector_series.Set(static_cast<double>(detector_.series_count()));
  metrics_->detector_samples.Set(static_cast<double>(detector_.samples_observed()));
  metrics_->detector_oom_kills.Set(static_cast<double>(detector_.oom_kills_counted()));
}

std::set<std::string> LeakPipeline::ComponentsOverQuota(const std::string& host,
                                                        const drip::v1::SampleBatch& batch,
                                                        size_t max_components) const {
  return detector_.ComponentsOverQuota(host, batch, max_components);
}

void LeakPipeline::ObserveBatch(const std::string& host, const drip::v1::SampleBatch& batch) {
  Observe(host, batch, /*streamed=*/true);
}

void LeakPipeline::ObserveReplicaBatch(const std::string& host,
                                       const drip::v1::SampleBatch& batch) {
  Observe(host, batch, /*streamed=*/false);
}

void LeakPipeline::Observe(const std::string& host, const drip::v1::SampleBatch& batch,
                           bool streamed) {
  detector_.ObserveBatch(host, batch, streamed);
  for (drip::v1::InstanceVersion version : batch.versions()) {
    version.set_host(host);
    versions_.Add(version);
  }
}

void LeakPipeline::SetHostMemory(const std::string& host, uint64_t bytes) {
  detector_.SetHostMemory(host, bytes);
}

absl::StatusOr<uint64_t> LeakPipeline::ReplayHost(const std::string& host) {
  const int64_t now_ms = clock_->NowMs();
  return detector_.RebuildHost(store_, host, now_ms - options_.rebuild_window.count(), now_ms);
}

void LeakPipeline::SetCommandRelay(CommandRelay* relay) { mitigations_.SetRelay(relay); }

FleetSuspects LeakPipeline::Suspects(const std::string& component) const {
  FleetSuspects suspects = detector_.Suspects(component);
  snapshots_.Annotate(&suspects);
  return suspects;
}

std::vector<drip::v1::LeakReport> LeakPipeline::ListReports(const std::string& state,
                                                            const std::string& component) const {
  return reports_.List(state, component);
}

absl::StatusOr<drip::v1::LeakReport> LeakPipeline::GetReport(const std::string& id) const {
  return reports_.Get(id);
}

absl::StatusOr<std::string> LeakPipeline::ReportSnapshot(const std::string& id, bool first) const {
  return reports_.Snapshot(id, first);
}

absl::StatusOr<drip::v1::LeakReport> LeakPipeline::SetReportState(const std::string& id,
                                                                  const std::string& state,
                                                                  const std::string& actor,
                                                                  const std::string& note,
                                                                  int64_t now_ms) {
  return reports_.SetState(id, state, actor, note, now_ms);
}

absl::StatusOr<std::vector<drip::v1::AuditEntry>> LeakPipeline::RequestMitigation(
    const drip::v1::MitigateRequest& request, const std::string& actor, int64_t now_ms) {
  return mitigations_.Request(request, actor, now_ms);
}

absl::Status LeakPipeline::AdmitRelayedMitigation(const std::string& host,
                                                  const std::string& command_id,
                                                  const drip::v1::MitigationCommand& command,
                                                  int64_t now_ms) {
  absl::StatusOr<drip::v1::LeakReport> report = KnownReport(command.report_id());
  if (!report.ok()) return report.status();
  return mitigations_.AdmitRelayed(std::move(*report), host, command_id, command, now_ms);
}

absl::Status LeakPipeline::Audit(std::vector<drip::v1::AuditEntry>* entries) {
  return reports_.Audit(entries);
}

}  // namespace drip::collector
